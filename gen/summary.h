// Per-rank-class accounting of a generated workload: FLOPs, bytes per
// collective per group axis, memory footprint against capacity, bubble.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "gen/strategy.h"
#include "network/topology.h"

namespace orrery::gen {

struct MemoryFootprint {
  uint64_t params = 0;             // Ψ of the rank
  uint64_t model_state_bytes = 0;  // params + grads + optimizer per ZeRO stage
  uint64_t activation_bytes_per_layer = 0;
  int64_t layers = 0;     // layers per unit in flight (per chunk when interleaved)
  int64_t in_flight = 0;  // microbatches (chunks when interleaved) whose activations are held at the peak
  uint64_t activation_bytes = 0;
  uint64_t total_bytes = 0;      // in HBM
  uint64_t offloaded_bytes = 0;  // in the remote pool (--offload)
};
MemoryFootprint StageMemory(const ModelDesc& m, const Strategy& s, int64_t stage);
// Over capacity: an error naming the stage (rank class) and the numbers.
Status CheckCapacity(const ModelDesc& m, const Strategy& s, uint64_t hbm_bytes);

struct ClassTotals {
  Flops flops = 0;
  uint64_t nodes = 0;
  // "all-reduce tp" -> {count, bytes}
  std::map<std::string, std::pair<uint64_t, uint64_t>> comm;
};
ClassTotals Totals(const GraphBuilder& g);
// FLOPs of every rank's compute nodes, summed.
Flops TotalFlops(const Workload& w);

// `dims`: the network's dimensions (empty: unknown; no placement lines).
std::string FormatSummary(const ModelDesc& m, const Strategy& s, const Workload& w, uint64_t hbm_bytes,
                          const std::vector<Dim>& dims = {});

}  // namespace orrery::gen
