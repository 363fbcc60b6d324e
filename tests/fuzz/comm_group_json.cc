// Fuzz target: the communicator-group JSON reader; accepted groups are then
// used by the fixed traces (whose all-reduce names pg_name "0"), non-members included.
#include <cstddef>
#include <cstdint>

#include "extern/astra_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("comm_group.json", data, size);
  auto groups = ReadCommGroupJson(path, fuzz::kRanks);
  if (!groups.ok()) {
    fuzz::Note("groups", groups.status());
    return 0;
  }
  RunConfig c;
  c.files.comm_groups = path;
  fuzz::Note("run", fuzz::RunSmall(c).status());
  return 0;
}
