// The toy traces of `orrery trace gen-dp` / `gen-coll` and the embedded
// examples: small Chakra workloads written through the generator's builder.
#pragma once
#include <cstdint>
#include <string>

#include "core/collective_kind.h"
#include "core/status.h"
#include "core/units.h"

namespace orrery {

// The data-parallel training loop used by the benchmarks: `layers` forward COMP
// nodes (fwd_us each) chained; then for each layer from last to first a
// backward COMP (bwd_us) and an ALL_REDUCE of `allreduce_bytes` depending on it.
struct DataParallelSpec {
  int npus = 8;
  int layers = 24;
  uint64_t fwd_us = 500;
  uint64_t bwd_us = 1000;
  uint64_t allreduce_bytes = 32 * kBytesPerMiB;
  // Activations: each forward layer's output (bytes) stays in HBM until its
  // backward; with `offload`, it is stored to the remote tier right after the
  // forward and loaded back before the backward.
  uint64_t activation_bytes = 0;
  bool offload = false;
  // A straggler: rank `slow_rank` (-1: none) computes `slow_percent` % longer
  // (every forward and backward node). The slowed durations must be whole
  // microseconds (500 us at 20 % is 600 us; 7 % of 500 us is refused).
  int slow_rank = -1;
  uint64_t slow_percent = 0;
};
// Writes PREFIX.<rank>.et for every rank.
Status WriteDataParallelTraces(const DataParallelSpec& spec, const std::string& prefix);
// A single collective per rank (microbenchmark).
Status WriteSingleCollectiveTraces(int npus, CollectiveKind kind, uint64_t bytes, const std::string& prefix);

}  // namespace orrery
