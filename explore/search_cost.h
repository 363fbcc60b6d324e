// The symbolic cost of a strategy (`orrery search`): per-rank compute from the
// FLOPs and bytes of the generated blocks under the system's roofline, the
// communication of each parallel axis over the network dimension the
// simulation charges it on (CostModel::hierarchical_groups), the pipeline bubble. A pure function of the model, the
// strategy and the hardware numbers. Formula: docs/generator.md, "Strategy search".
#pragma once
#include <cstdint>
#include <vector>

#include "extern/astra_config.h"
#include "gen/strategy.h"
#include "network/topology.h"

namespace orrery::gen {

struct CostModel {
  double peak_flops_per_s = 0;  // TflopsToFlopsPerSecond(system JSON peak-perf)
  double mem_bytes_per_s = 0;   // BytesPerNsToBytesPerSecond(local-mem-bw) (roofline); 0: compute-bound
  std::vector<Dim> dims;        // the network, dimension 0 fastest
  // The system layer's collective chunking: a collective runs as `splits`
  // chunks (preferred-dataset-splits) one after another on a dimension, each
  // paying every step's latency; a message also pays the endpoint delay.
  int splits = 1;
  double endpoint_delay_s = 0;
  // The system's group-collective-model. ASTRA-sim's (false): a group smaller
  // than the network runs as one flat ring over its sorted ranks, and a
  // message across several dimensions is charged on the lowest one only; the
  // ring's every step changes the group's lowest coordinate, so the whole
  // collective goes at the speed of the lowest dimension the group spans.
  // Hierarchical (true): charged on the slowest spanned dimension.
  bool hierarchical_groups = false;
  // What the lower bound may assume of the system layer (docs/generator.md,
  // "Lower bound"): at most `active_chunks` chunks per network dimension run
  // at once on an NPU (active-chunks-per-dimension); `chunks_by_priority`:
  // its queues take chunks by the collectives' priority
  // (intra-dimension-scheduling FIFO), so a collective's chunks start in
  // their order on every NPU (SmallestFirst: false); `ring_collectives`:
  // every all-reduce, reduce-scatter and all-gather implementation is ring
  // (or none is named). Without it the bound counts no collective.
  int active_chunks = 1;
  bool chunks_by_priority = true;
  bool ring_collectives = true;
};

// The cost model of a system JSON (its roofline, chunking, endpoint delay,
// group model, queues and algorithms) on `dims`.
CostModel CostModelOf(const AstraSystemConfig& sys, std::vector<Dim> dims);

// Seconds per iteration of the slowest pipeline stage; every term is what
// that stage's critical path spends on it, so they add up to `total_s`.
struct SymbolicCost {
  Flops flops_per_rank = 0;  // the slowest stage's rank, per iteration
  double compute_s = 0;      // m microbatches of forward + backward (+ recompute)
  double tp_s = 0;           // TP all-reduces (SP: all-gather + reduce-scatter)
  double cp_s = 0;           // ring-attention K/V transfers not hidden by the attention core
  double ep_s = 0;           // MoE dispatch / combine all-to-alls
  double pp_s = 0;           // activation and gradient messages between stages
  double zero3_s = 0;        // ZeRO-3 parameter gathers not hidden by the layer before
  double bubble_s = 0;       // (p−1)/V slots of the per-microbatch time
  double dp_s = 0;           // gradient reduction not hidden by the last backward
  double bubble = 0;         // (p−1)/(m·V+p−1)
  double total_s = 0;
  // A lower bound of the simulated iteration time, proven in
  // docs/generator.md, "Lower bound" (explore/search_bound.cc): the slowest
  // of stage 0 and stage p−1 needs m times the chain of one microbatch
  // (compute at the roofline, TP collectives, ZeRO-3's first gathers of each
  // model chunk's pass, ring attention's waits for K/V blocks), the last
  // stage also the pipeline's way in and out, less 1 ns for each node and
  // message the simulation truncates.
  double lower_s = 0;
};

// `s` must pass ValidateStrategy; the network's NPUs must equal the strategy's.
SymbolicCost EstimateCost(const ModelDesc& m, const Strategy& s, const CostModel& c);

// FLOPs of one rank of pipeline stage `stage` per iteration, from the same
// per-block counts as the generator (summed over all ranks: ModelFlops).
Flops StageRankFlops(const ModelDesc& m, const Strategy& s, int64_t stage);

// Spearman's rank correlation of x and y (equal sizes, at least 2): the
// Pearson correlation of their ranks, tied values taking their mean rank
// (without ties this is 1 − 6·Σd²/(n(n²−1))). NaN when either is constant.
double SpearmanRho(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace orrery::gen
