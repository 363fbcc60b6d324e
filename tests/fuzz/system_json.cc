// Fuzz target: the system JSON reader; an accepted configuration is then
// simulated on the fixed 4-NPU ring.
#include <cstddef>
#include <cstdint>

#include "extern/astra_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("system.json", data, size);
  auto sys = ReadAstraSystemJson(path);
  if (!sys.ok()) {
    fuzz::Note("system", sys.status());
    return 0;
  }
  if (sys->preferred_dataset_splits > 64 || sys->active_chunks_per_dimension > 64) return 0;  // bounded run
  RunConfig c;
  c.files.system = path;
  fuzz::Note("run", fuzz::RunSmall(c).status());
  return 0;
}
