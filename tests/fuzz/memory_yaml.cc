// Fuzz target: Orrery's memory YAML (a flat mapping read by ReadFlatYaml and
// validated by the backend it names); accepted files are simulated.
#include <cstddef>
#include <cstdint>

#include "extern/astra_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("memory.yml", data, size);
  auto kv = ReadFlatYaml(path);
  if (!kv.ok()) return 0;
  RunConfig c;
  c.files.memory_config = path;
  (void)fuzz::RunSmall(c);
  return 0;
}
