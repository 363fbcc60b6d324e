#include "run/run_budget.h"

#include <unistd.h>

#include <cstdio>

#include "core/tick.h"
#include "core/units.h"

namespace orrery {

uint64_t EstimateRunBytes(uint64_t npus, uint64_t simulated, uint64_t trace_bytes) {
  return SatAdd(SatAdd(SatMul(npus, kBytesPerNpu), SatMul(simulated, kBytesPerSimulatedNpu)),
                SatMul(trace_bytes, kGraphBytesPerTraceByte));
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return SatMul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page));
}

Status CheckRunFitsInMemory(uint64_t estimate, uint64_t physical, const std::string& network, uint64_t npus) {
  if (physical == 0 || estimate <= physical) return Status::Ok();
  auto gib = [](uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof(s), "%.1f GiB", BytesToGiB(static_cast<double>(b)));
    return std::string(s);
  };
  return Status::Invalid("the network (" + network + ") has " + std::to_string(npus) +
                         " NPUs: simulating it needs an estimated " + gib(estimate) + " (" + std::to_string(estimate) +
                         " bytes: per-NPU state and the traces), more than this machine's physical memory of " +
                         gib(physical) + "; use a smaller network or identical traces (one simulated rank)");
}

}  // namespace orrery
