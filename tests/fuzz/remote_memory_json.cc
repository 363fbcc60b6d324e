// Fuzz target: the remote-memory JSON reader; an accepted configuration is
// then simulated (the fixed traces load from memory).
#include <cstddef>
#include <cstdint>

#include "extern/astra_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("remote_memory.json", data, size);
  auto mem = ReadAstraRemoteMemoryJson(path);
  if (!mem.ok()) return 0;
  RunConfig c;
  c.files.remote_memory = path;
  (void)fuzz::RunSmall(c);
  return 0;
}
