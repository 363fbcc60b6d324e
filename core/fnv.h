// FNV-1a, 64 bits: the content hashes of a run's configuration (run/spec.h)
// and of its inputs. Not cryptographic: it tells configurations apart, it does
// not defend against crafted collisions.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace orrery {

inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;

inline uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// 16 lower-case hex digits.
inline std::string HexU64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace orrery
