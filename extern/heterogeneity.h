// The heterogeneity file (`orrery run --heterogeneity=FILE.yml`; docs/formats.md,
// "Heterogeneous clusters"): per-NPU compute speeds and per-NPU link bandwidth
// factors, relative to the system and network files.
//
//   compute:
//     - ranks: 5            # a rank, a list [5, 9], or a range "0-7"
//       speed: 0.8          # COMP nodes of these ranks take 1 / 0.8 of their time
//   links:
//     - ranks: "8-15"
//       dim: 1              # a network dimension, 0-based
//       bandwidth: 0.5      # these NPUs' links in dim 1 at 0.5 x its bandwidth
#pragma once
#include <cstdint>
#include <string>

#include "core/heterogeneity.h"
#include "core/status.h"

namespace orrery {

// At most this many (rank, kind) entries listed in all: the file describes
// the exceptions of a cluster, not every NPU of a 2^26-NPU one.
inline constexpr int64_t kMaxHeterogeneityEntries = int64_t{1} << 20;
// Speeds and factors lie in [kMinHeterogeneityFactor, kMaxHeterogeneityFactor].
inline constexpr double kMinHeterogeneityFactor = 1e-6;
inline constexpr double kMaxHeterogeneityFactor = 1e6;

// Reads the file for a network of `npus` NPUs in `dims` dimensions; every
// rank, dimension and number is checked, and a rank listed twice for the same
// thing is an error naming both lines.
Result<Heterogeneity> ReadHeterogeneityYaml(const std::string& path, int64_t npus, int dims);

}  // namespace orrery
