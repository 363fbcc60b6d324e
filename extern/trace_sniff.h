// What a file given as a Chakra trace is instead (docs/formats.md, "Real
// traces"): a PyTorch host execution trace, a Kineto device trace, a linked
// host + device trace, a Chakra trace as JSON, gzip, or other JSON. Chakra's
// .et files are binary protobuf; these are text, and reading them as records
// gave "truncated trace ... at byte 8192" before.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace orrery {

// How many leading bytes DescribeNotATrace looks at, at most.
inline constexpr size_t kSniffBytes = 64 * 1024;

// From the file's first bytes: a sentence saying what the file is and how to
// turn it into a trace ("a PyTorch execution trace (JSON, schema 1.0.1), not a
// Chakra .et trace; link it ... and convert it ..."), or nullopt when the bytes
// may be a Chakra trace (anything binary). `file` names the file in the
// commands the sentence suggests. Text is recognised only when its
// first non-blank character is '{' or '[' and the first 4 KiB are all text: a
// trace's records hold field tags below 0x20 in their first bytes.
std::optional<std::string> DescribeNotATrace(std::string_view head, std::string_view file);

}  // namespace orrery
