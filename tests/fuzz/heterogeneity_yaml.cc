// Fuzz target: the heterogeneity file (`orrery run --heterogeneity=F.yml`;
// docs/formats.md, "Heterogeneous clusters"), read for the fixed 4-NPU ring;
// an accepted file is simulated with the fixed traces, so its speeds and link
// factors reach the executor and the analytical backend.
#include <cstddef>
#include <cstdint>

#include "extern/heterogeneity.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("het.yml", data, size);
  const Result<Heterogeneity> h = ReadHeterogeneityYaml(path, fuzz::kRanks, 1);
  if (!h.ok()) {
    fuzz::Note("heterogeneity", h.status());
    return 0;
  }
  RunConfig c;
  c.files.heterogeneity = path;
  const Result<RunReport> r = fuzz::RunSmall(c);
  fuzz::Note("run", r.status());
  return 0;
}
