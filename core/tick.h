// Simulated time. One tick is one nanosecond: ASTRA-sim reports integer
// nanoseconds and truncates each double-valued delay to whole ns at the points
// its model computes them, so parity needs the same granularity. Rates (bytes
// per ns) stay doubles and are truncated exactly where the model truncates.
#pragma once
#include <cstdint>
#include <limits>

namespace orrery {

using Tick = uint64_t;  // nanoseconds since the start of the run
inline constexpr Tick kTickMax = std::numeric_limits<Tick>::max();

// 1 GB/s in ASTRA-sim's network YAML means 2^30 bytes per second.
inline double GiBpsToBytesPerNs(double gbps) { return gbps * 1073741824.0 / 1e9; }

}  // namespace orrery
