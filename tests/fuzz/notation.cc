// Fuzz target: the compact topology notation parser (network/notation.cc) and
// its formatter; what the formatter prints must parse again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "network/notation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto dims = ParseTopologyNotation(text);
  if (!dims.ok()) return 0;
  const std::string again = FormatTopologyNotation(dims.value());
  if (!ParseTopologyNotation(again).ok()) {
    std::fprintf(stderr, "notation: '%s' parsed, but its formatted form '%s' does not\n", text.c_str(), again.c_str());
    std::abort();
  }
  return 0;
}
