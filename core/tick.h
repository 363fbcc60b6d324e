// Simulated time. One tick is one nanosecond: ASTRA-sim reports integer
// nanoseconds and truncates each double-valued delay to whole ns at the points
// its model computes them, so parity needs the same granularity. Rates (bytes
// per ns) stay doubles and are truncated exactly where the model truncates.
#pragma once
#include <cstdint>
#include <limits>

#include "core/units.h"  // the unit conversions (GiBpsToBytesPerNs was here)

namespace orrery {

using Tick = uint64_t;  // nanoseconds since the start of the run
inline constexpr Tick kTickMax = std::numeric_limits<Tick>::max();

// Checked time arithmetic. Simulated time must never wrap: these saturate at
// kTickMax, which the event queue treats as "past the end of representable
// time" and reports as an error instead of scheduling.
inline Tick SatAdd(Tick a, Tick b) {
  Tick out;
  return __builtin_add_overflow(a, b, &out) ? kTickMax : out;
}
inline Tick SatMul(Tick a, Tick b) {
  Tick out;
  return __builtin_mul_overflow(a, b, &out) ? kTickMax : out;
}
// A double number of ns, truncated to whole ns (as static_cast would), but
// NaN and values >= 2^64 give kTickMax and negative values give 0.
inline Tick TicksFromDouble(double ns) {
  if (ns != ns || ns >= 18446744073709551616.0) return kTickMax;
  if (!(ns > 0)) return 0;
  return static_cast<Tick>(ns);
}

}  // namespace orrery
