#include "plugins/remote/peer_text.h"

#include <cstdint>
#include <cstdio>

namespace orrery::remote {

namespace {

// The length of the valid UTF-8 sequence of 2..4 bytes at the start of `s`
// and its code point, or 0 (overlong forms, surrogates, past U+10FFFF and
// truncated sequences are not valid).
size_t Utf8Sequence(std::string_view s, uint32_t* code_point) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = b(0);
  size_t n = 0;
  uint32_t cp = 0, min = 0;
  if (lead >= 0xc2 && lead <= 0xdf) n = 2, cp = lead & 0x1f, min = 0x80;
  if (lead >= 0xe0 && lead <= 0xef) n = 3, cp = lead & 0x0f, min = 0x800;
  if (lead >= 0xf0 && lead <= 0xf4) n = 4, cp = lead & 0x07, min = 0x10000;
  if (n == 0 || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return n;
}

// Code points that move or hide text on a terminal: C1 controls, the
// bidirectional embeddings, overrides and isolates.
bool Hides(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
         cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

std::string Hex(const char* format, uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

// The printable form of the character at the start of `s`; `*used` the bytes of `s` it stands for.
std::string Piece(std::string_view s, size_t* used) {
  const uint8_t c = static_cast<uint8_t>(s[0]);
  *used = 1;
  if (c == '\\') return "\\\\";
  if (c == '\n') return "\\n";
  if (c == '\t') return "\\t";
  if (c == '\r') return "\\r";
  if (c >= 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
  if (c < 0x80) return Hex("\\x%02x", c);  // C0 controls and DEL
  uint32_t cp = 0;
  const size_t n = Utf8Sequence(s, &cp);
  if (n == 0) return Hex("\\x%02x", c);
  *used = n;
  if (Hides(cp)) return Hex("\\u{%04x}", cp);
  return std::string(s.substr(0, n));
}

}  // namespace

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t used = 0;
    std::string piece = Piece(text.substr(at), &used);
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    at += used;
  }
  if (at < text.size()) out += "\u2026 (" + std::to_string(text.size() - at) + " bytes more)";
  return out;
}

}  // namespace orrery::remote
