// The ranges every input knob is checked against when it is read (README,
// "Input formats" > "Ranges"). They are chosen so that no single quantity the
// model derives from them can leave uint64 nanoseconds: the largest transfer
// (kMaxBytes) at the slowest bandwidth (1e-3 GB/s) takes 2.8e17 ns, the largest
// roofline node (kMaxNumOps at 1e-3 TFLOPS) 1e18 ns, both below 2^64 = 1.8e19.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/parse.h"

namespace orrery {

// Network size: per-NPU state is allocated for every NPU, so the total is capped
// before anything is built (2^26 = 67M NPUs, ~4x the largest machines announced).
inline constexpr int64_t kMaxNpus = int64_t{1} << 26;
// Bandwidths in GB/s (network: 2^30 B/s; memory: 10^9 B/s).
inline constexpr DoubleRange kBandwidthGBps{1e-3, 1e9, false};
// Latencies and delays in ns: up to 1e12 ns (1000 s) per hop or access.
inline constexpr DoubleRange kLatencyNs{0, 1e12, false};
inline constexpr uint64_t kMaxLatencyNs = 1000000000000ull;
// Byte counts (comm_size, tensor_size, output_bytes): 2^48 B = 256 TiB per node.
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 48;
// Roofline work per COMP node: up to 1e18 operations.
inline constexpr uint64_t kMaxNumOps = 1000000000000000000ull;
// Replayed COMP duration: up to 1e12 us (11.6 days) per node.
inline constexpr uint64_t kMaxDurationMicros = 1000000000000ull;
// Roofline: peak-perf in TFLOPS.
inline constexpr DoubleRange kPeakPerfTflops{1e-3, 1e9, false};
// Rates in bytes per ns (in-switch reduction).
inline constexpr DoubleRange kBytesPerNs{1e-3, 1e9, false};
// preferred-dataset-splits: every chunk is a collective of its own through every
// phase, so work grows with the count; ASTRA-sim raises a chunk smaller than the
// NPU count back to that count, so beyond a few thousand chunks only cost grows.
inline constexpr int64_t kMaxDatasetSplits = 4096;
// active-chunks-per-dimension: chunks in flight per dimension.
inline constexpr int64_t kMaxActiveChunks = 4096;
// Parallel links per NPU and direction in one dimension.
inline constexpr int64_t kMaxLinksPerNpu = 4096;
// FIFO ports of a memory pool (one server state each).
inline constexpr int64_t kMaxPoolPorts = int64_t{1} << 16;
// Capacity settings in bytes (memory YAML): up to 2^60 B (1 EiB).
inline constexpr uint64_t kMaxCapacityBytes = uint64_t{1} << 60;
// Communication streams per NPU (Orrery node attribute comm_stream, 0..7): each
// has its own communication slot (workload/executor.h).
inline constexpr int kMaxCommStreams = 8;

// a * b, or false when the product exceeds `limit` (or int64) — checked before it is formed.
inline bool MulWithin(int64_t a, int64_t b, int64_t limit, int64_t* out) {
  int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p) || p > limit) return false;
  *out = p;
  return true;
}

// The product of `factors` (each >= 0) when it is at most `limit`: every step
// is checked before it is formed, so nothing overflows. Otherwise -1, and
// *broke (when given) is the index of the factor that carried the running
// product past `limit` (or past int64).
int64_t ProductWithin(std::initializer_list<int64_t> factors, int64_t limit, size_t* broke = nullptr);

// One factor of a named product: how a message names it ("--tp", "hidden")
// and, for a file, the line it was read from (0: none).
struct Factor {
  std::string name;
  int64_t value = 0;
  int line = 0;
};

// ProductWithin with the names: the product, or one message naming the
// factors, their values, the product (exact, or about it when it passes
// int64), the limit and the factor that passed it:
//   m.yml:4: vocab·hidden = 1099511627776·1099511627776 = about 1.2e+24: above 17592186044416 from hidden on; ...
// The message's key is where.key, else the factors' names joined by "·";
// its line is where.line, else the line of the factor that passed the limit.
Result<int64_t> CheckedProduct(const std::vector<Factor>& factors, int64_t limit, const Where& where,
                               const std::string& allowed);

}  // namespace orrery
