// Text that crossed the remote protocol (a peer's error, its link names; a
// client's block or model name in the peer's log) is untrusted: it is shown
// only through Printable, which keeps valid UTF-8 that prints, escapes the
// rest, and caps the length.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace orrery::remote {

// Caps for what a peer or a client may make Orrery print.
inline constexpr size_t kMaxErrorText = 1024;  // a peer's error, a client's name in the peer's log
inline constexpr size_t kMaxLinkName = 256;    // one link's name in the report

// `text` as it may be printed: printable ASCII and valid UTF-8 of printing
// characters kept; a backslash as \\; control bytes (C0, DEL) as \n, \t, \r or
// \xNN; C1 controls and the bidirectional overrides as \u{XXXX}; bytes that are
// not valid UTF-8 (overlong forms, surrogates, stray continuation bytes) as
// \xNN. At most `max_bytes` of the result come from `text`; the rest is
// replaced with "… (N bytes more)", N counting the bytes of `text` left out.
std::string Printable(std::string_view text, size_t max_bytes);

}  // namespace orrery::remote
