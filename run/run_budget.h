// Memory a run will need, estimated before anything per NPU is built, so a
// network too large for the machine is refused with a message instead of
// being killed by the kernel halfway through building it.
#pragma once
#include <cstdint>
#include <string>

#include "core/status.h"

namespace orrery {

// A rough upper estimate of the memory a run needs before anything per NPU is
// built: `npus` ranks in the report and the engine's tables, `simulated` of
// them with full system and executor state, and `trace_bytes` of trace files
// read into graphs.
inline constexpr uint64_t kBytesPerNpu = 256;            // report row, stream counters, tables
inline constexpr uint64_t kBytesPerSimulatedNpu = 4096;  // system layer, queues, executor state
inline constexpr uint64_t kGraphBytesPerTraceByte = 8;   // a node's protobuf bytes -> WorkNode and edges
uint64_t EstimateRunBytes(uint64_t npus, uint64_t simulated, uint64_t trace_bytes);
// The machine's physical memory in bytes (0 when unknown).
uint64_t PhysicalMemoryBytes();
// An error when `estimate` exceeds `physical` (a known, nonzero amount).
Status CheckRunFitsInMemory(uint64_t estimate, uint64_t physical, const std::string& network, uint64_t npus);

}  // namespace orrery
