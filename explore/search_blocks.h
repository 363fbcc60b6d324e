// What the strategy search's symbolic cost (explore/search_cost.cc) and its
// lower bound (explore/search_bound.cc) both read off a strategy without
// building its graph: one rank's ops and bytes per generated block, the layers
// a stage holds, the roofline, and the compute of a layer and of a stage's
// microbatch. Internal to explore/.
#pragma once
#include <algorithm>
#include <cstdint>

#include "explore/search_cost.h"
#include "gen/strategy.h"

namespace orrery::gen {

// One rank's blocks for one microbatch, as StageGen builds them (ops and the
// bytes the roofline sees), forward pass.
struct Blocks {
  uint64_t act = 0;  // b·(s/cp)·h·2: TP collectives, PP messages
  uint64_t attn_ops = 0, attn_bytes = 0, core_step = 0, core = 0, kv_bytes = 0;
  uint64_t mlp_ops = 0, mlp_bytes = 0;
  uint64_t router_ops = 0, router_bytes = 0, experts_ops = 0, experts_bytes = 0, a2a = 0;
  uint64_t logit_ops = 0, logit_bytes = 0;
};
Blocks BlocksOf(const ModelDesc& m, const Strategy& s);

// Layers a rank of `stage` holds: dense and MoE ones (interleaved: its V chunks).
struct StageLayerCount {
  int64_t dense = 0, moe = 0;
};
StageLayerCount LayersOf(const ModelDesc& m, const Strategy& s, int64_t stage);

class Roofline {
 public:
  explicit Roofline(const CostModel& c) : c_(c) {}
  // ops / min(peak, mem_bw · ops/bytes) = max(ops/peak, bytes/mem_bw), as the
  // system layer times a COMP node.
  double operator()(double ops, double bytes) const {
    if (ops == 0 || bytes == 0) return 0;
    const double compute = ops / c_.peak_flops_per_s;
    return c_.mem_bytes_per_s > 0 ? std::max(compute, bytes / c_.mem_bytes_per_s) : compute;
  }

 private:
  const CostModel& c_;
};

// The compute of one layer of one microbatch on a rank (seconds), the same on
// every stage: each block at the roofline of its ops and bytes.
struct LayerCompute {
  double attn_f = 0, attn_b = 0, mlp_f = 0, mlp_b = 0, moe_f = 0, moe_b = 0;
  double passes_f = 1;  // forwards per microbatch (full recomputation: 2)
};
LayerCompute LayerComputeOf(const Blocks& k, const Strategy& s, const CostModel& c);

// The compute of one microbatch on a rank of `stage` (seconds): one forward
// and the backward of its layers, and in all (the forwards, the backward, the
// output layer on the last stage).
struct StageCompute {
  double fwd = 0, bwd = 0, total = 0;
};
StageCompute StageComputeOf(const ModelDesc& m, const Strategy& s, const CostModel& c, const Blocks& k,
                            const LayerCompute& lc, int64_t stage);

// SymbolicCost::lower_s (explore/search_bound.cc; docs/generator.md, "Lower bound").
double LowerBoundS(const ModelDesc& m, const Strategy& s, const CostModel& c);

}  // namespace orrery::gen
