// Fuzz target: the network YAML reader, both ASTRA-sim's form (topology/npus_count/...) and
// Orrery's (dims: [...]); a small accepted network is then simulated.
#include <cstddef>
#include <cstdint>

#include "extern/astra_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("network.yml", data, size);
  auto net = ReadAstraNetworkYaml(path);
  if (!net.ok()) {
    fuzz::Note("network", net.status());
    return 0;
  }
  // Simulate only networks the fixed traces can fill (others must fail cleanly too).
  const int64_t npus = net->TotalNpus();
  if (npus >= 1 && npus <= 64) {
    RunConfig c;
    c.files.network = path;
    fuzz::Note("run", fuzz::RunSmall(c).status());
  }
  return 0;
}
