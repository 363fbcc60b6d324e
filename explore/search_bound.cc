// SymbolicCost::lower_s: a time no simulation of the strategy goes below.
// Each function follows one step of the proof in docs/generator.md, "Lower
// bound": per stage, the minimum over its ranks of the end of the i-th node
// of their common chain grows by at least that node's term.
#include <algorithm>
#include <bit>
#include <vector>

#include "core/units.h"
#include "explore/search_blocks.h"
#include "gen/placement.h"

namespace orrery::gen {
namespace {

// A time the simulation cannot beat, and the events in it (compute nodes,
// messages) whose time it truncates to whole ns: each may take up to 1 ns
// less than its share of `s`.
struct Bound {
  double s = 0, events = 0;
  Bound& operator+=(const Bound& o) {
    s += o.s;
    events += o.events;
    return *this;
  }
  double Net() const { return s - events * kSecondsPerNs; }
};
Bound operator*(double k, const Bound& b) { return {k * b.s, k * b.events}; }

// A ring one phase of a collective runs on (or a point-to-point neighbour's
// link): its ranks, and what every message to the next rank at least pays:
// the hops' latency (a Switch two links, any other block's neighbour at
// least one) and its bytes at the dimension's bandwidth.
struct Ring {
  int64_t n = 1;
  double hop_s = 0, bytes_per_s = 0;
};

Ring RingOn(const Dim& d, int64_t n) {
  return Ring{n, (d.block == Block::kSwitch ? 2.0 : 1.0) * d.latency_ns * kSecondsPerNs,
              BytesPerNsToBytesPerSecond(GiBpsToBytesPerNs(d.bandwidth_gbps) * d.links_per_npu)};
}

// The rings of one chunk of a collective over a group of `set`, one per
// phase: one ring over the group's ranks in rank order when the system layer
// runs it as a flat group (every message crosses the lowest spanned
// dimension, so costs at least its hop), else one per spanned dimension over
// the group's members along it (the whole network; under the hierarchical
// model a group of whole dimensions, or a grid: RunsPerDimension). Empty: a group of one, or boundaries that do not
// chain (no such guarantee; the bound then counts none of the group's communication).
std::vector<Ring> RingsOf(const Strategy& s, AxisSet set, const CostModel& c) {
  const std::array<int64_t, kNumAxes> sizes{s.tp, s.cp, s.ep, s.dp, s.pp};
  int64_t n = 1, npus = 1;
  for (int a = 0; a < kNumAxes; ++a) {
    npus *= sizes[a];
    if (set & Axes(static_cast<Axis>(a))) n *= sizes[a];
  }
  uint32_t mask = 0;
  if (n <= 1 || !SpannedDimsIfChained(sizes, s.order, set, c.dims, &mask) || mask == 0) return {};
  int64_t whole = 1;  // NPUs of the spanned dimensions
  for (size_t d = 0; d < c.dims.size() && d < 32; ++d) whole *= (mask >> d) & 1u ? c.dims[d].npus : 1;
  GroupDims grid;
  const bool gridded = c.hierarchical_groups && RunsPerDimensionIfChained(sizes, s.order, set, c.dims, &grid);
  const bool per_dimension = c.hierarchical_groups ? whole == n || gridded : n == npus;
  if (!per_dimension) return {RingOn(c.dims[std::countr_zero(mask)], n)};
  std::vector<Ring> rings;
  for (size_t d = 0; d < c.dims.size() && d < 32; ++d) {
    if ((mask >> d) & 1u) rings.push_back(RingOn(c.dims[d], gridded ? grid.count[d] : c.dims[d].npus));
  }
  return rings;
}

// A ring collective of `bytes` (ASTRA-sim's comm_size: an all-gather's shard,
// else the whole buffer) cut into chunks of at least ⌊bytes/splits⌋ (except
// all-gather, at least the network's NPUs), each a message of at least that
// over the group (all-gather: the chunk) per step: all-reduce 2(n−1) steps a
// ring, the others n−1, each the message's delay and the endpoint delay
// after the one before. One phase: ⌈chunks/active⌉ chunks one after another
// when the queues keep their order; several phases: one chunk's phases.
Bound CollectiveLower(Coll type, uint64_t bytes, const std::vector<Ring>& rings, const CostModel& c, int64_t npus) {
  if (!c.ring_collectives || rings.empty() || bytes == 0) return {};
  const bool gather = type == Coll::kAllGather;
  const uint64_t splits = static_cast<uint64_t>(std::max(c.splits, 1));
  uint64_t chunk = bytes / splits, chunks = splits;
  if (gather && chunk == 0) chunk = bytes, chunks = 1;
  if (!gather) chunk = std::max(chunk, static_cast<uint64_t>(npus));
  uint64_t group = 1;
  for (const Ring& r : rings) group *= static_cast<uint64_t>(r.n);
  const double msg = static_cast<double>(gather ? chunk : chunk / group);
  Bound one;
  for (const Ring& r : rings) {
    const double steps = (type == Coll::kAllReduce ? 2.0 : 1.0) * static_cast<double>(r.n - 1);
    one += Bound{steps * (r.hop_s + c.endpoint_delay_s + msg / r.bytes_per_s), steps};
  }
  if (rings.size() > 1 || !c.chunks_by_priority) return one;
  const uint64_t active = static_cast<uint64_t>(std::max(c.active_chunks, 1));
  return static_cast<double>((chunks + active - 1) / active) * one;
}

// The groups of a stage's chain.
struct ChainRings {
  std::vector<Ring> tp, cp, dense_dp, expert_dp;
  int64_t npus = 1;
};

// Nodes of one layer's pass the simulation times apiece: the attention (one
// node, or ring attention's qkv, cores and proj) and the MLP (one node, or
// the router and the experts).
double NodesPerLayerPass(const ModelDesc& m, const Strategy& s) {
  return (s.cp > 1 ? static_cast<double>(s.cp) + 2 : 1.0) + (m.experts > 0 ? 2.0 : 1.0);
}

// Ring attention per layer of one microbatch: step i's core waits for the
// K/V block received from the previous rank, which sent it once it had step
// i−1's, so the cp−1 steps take at least cp−1 times the longer of the core
// and the message: beyond the cores (counted with the compute), max(0,
// message − core) a step, forward (each forward pass) and backward.
Bound RingAttentionWaits(const Blocks& k, const Strategy& s, const CostModel& c, const LayerCompute& lc,
                         const std::vector<Ring>& cp) {
  if (s.cp <= 1 || cp.empty()) return {};
  const Roofline roof(c);
  const Ring& r = cp.front();  // the lowest dimension the CP axis spans: every neighbour differs there
  auto msg = [&](double bytes) { return r.hop_s + bytes / r.bytes_per_s; };
  const double kv = static_cast<double>(k.kv_bytes), step = static_cast<double>(k.core_step);
  const double sel = s.recompute == Recompute::kSelective ? step : 0;
  const double core_f = roof(step, 2 * kv), core_b = roof(2 * step + sel, 4 * kv);
  const double steps = static_cast<double>(s.cp - 1);
  return Bound{steps * (lc.passes_f * std::max(0.0, msg(kv) - core_f) + std::max(0.0, msg(2 * kv) - core_b)),
               steps * (lc.passes_f + 1)};
}

// ZeRO-3: the gathers of the first layer of each model chunk's pass (no
// layer before it prefetched them): forward and recomputation at its first
// layer, backward at its last; the dense parameters over cp·ep·dp, a MoE
// layer's experts then over cp·dp.
Bound Zero3FirstGathers(const ModelDesc& m, const Strategy& s, const CostModel& c, const ChainRings& r, int64_t stage,
                        double passes_f) {
  const int64_t dense_dp = s.cp * s.ep * s.dp, expert_dp = s.cp * s.dp;
  if (s.zero != 3 || (dense_dp <= 1 && expert_dp <= 1)) return {};
  auto gathers = [&](int64_t j) {
    Bound b;
    const uint64_t tp = s.tp, bpv = s.bytes_per_value;
    const uint64_t dense = static_cast<uint64_t>(LayerParams(m, j) - ExpertParams(m, j)) / tp * bpv;
    const uint64_t expert = static_cast<uint64_t>(ExpertParams(m, j)) / (tp * s.ep) * bpv;
    if (dense_dp > 1) b += CollectiveLower(Coll::kAllGather, dense / dense_dp, r.dense_dp, c, r.npus);
    if (expert_dp > 1 && expert > 0) {
      b += CollectiveLower(Coll::kAllGather, expert / expert_dp, r.expert_dp, c, r.npus);
    }
    return b;
  };
  const int64_t chunks = s.schedule == Schedule::kInterleaved ? s.chunks : 1, vstages = s.pp * chunks;
  Bound out;
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t v = chunk * s.pp + stage, first = StageFirstLayer(m, vstages, v), n = StageLayers(m, vstages, v);
    if (n <= 0) continue;
    out += passes_f * gathers(first);
    out += gathers(first + n - 1);
  }
  return out;
}

// One microbatch of a rank of `stage`: its compute, TP collectives (each
// block of each pass ends in an all-reduce; with SP an all-gather of the
// shard before it and a reduce-scatter after), ring attention's waits and
// ZeRO-3's first gathers.
Bound ChainPerMicrobatch(const ModelDesc& m, const Strategy& s, const CostModel& c, const Blocks& k,
                         const LayerCompute& lc, const ChainRings& r, int64_t stage) {
  const StageLayerCount n = LayersOf(m, s, stage);
  const double layers = static_cast<double>(n.dense + n.moe), passes = lc.passes_f + 1;
  const bool logits = stage == s.pp - 1 && s.lm_head;
  Bound b{StageComputeOf(m, s, c, k, lc, stage).total, layers * passes * NodesPerLayerPass(m, s) + (logits ? 2 : 0)};
  Bound tp = CollectiveLower(Coll::kAllReduce, k.act, r.tp, c, r.npus);
  if (s.sp) {
    tp = CollectiveLower(Coll::kAllGather, k.act / static_cast<uint64_t>(s.tp), r.tp, c, r.npus);
    tp += CollectiveLower(Coll::kReduceScatter, k.act, r.tp, c, r.npus);
  }
  b += (2 * layers * passes) * tp;
  b += layers * RingAttentionWaits(k, s, c, lc, r.cp);
  b += Zero3FirstGathers(m, s, c, r, stage, lc.passes_f);
  return b;
}

// The last stage's first forward waits for the first microbatch's forward
// through the p−1 virtual stages before it, and its last backward is
// followed by the last microbatch's backward back through them: each at
// least ⌊L/(p·V)⌋ layers' compute (of the cheaper kind, dense or MoE).
Bound PipelineFill(const ModelDesc& m, const Strategy& s, const LayerCompute& lc) {
  if (s.pp <= 1) return {};
  const int64_t v = s.schedule == Schedule::kInterleaved ? s.chunks : 1;
  const double layers = static_cast<double>(m.layers / (s.pp * v)), stages = static_cast<double>(s.pp - 1);
  const double dense = lc.passes_f * (lc.attn_f + lc.mlp_f) + lc.attn_b + lc.mlp_b;
  const double moe = lc.passes_f * (lc.attn_f + lc.moe_f) + lc.attn_b + lc.moe_b;
  return Bound{stages * layers * (m.experts > 0 ? std::min(dense, moe) : dense),
               stages * layers * (lc.passes_f + 1) * NodesPerLayerPass(m, s)};
}

}  // namespace

double LowerBoundS(const ModelDesc& m, const Strategy& s, const CostModel& c) {
  const Blocks k = BlocksOf(m, s);
  const LayerCompute lc = LayerComputeOf(k, s, c);
  ChainRings r{RingsOf(s, Axes(Axis::kTp), c), RingsOf(s, Axes(Axis::kCp), c), RingsOf(s, kDenseDp, c),
               RingsOf(s, kExpertDp, c)};
  r.npus = s.tp * s.cp * s.ep * s.dp * s.pp;
  double best = 0;
  for (int64_t stage : {int64_t{0}, s.pp - 1}) {
    Bound b = static_cast<double>(s.microbatches) * ChainPerMicrobatch(m, s, c, k, lc, r, stage);
    if (stage == s.pp - 1) b += PipelineFill(m, s, lc);
    best = std::max(best, b.Net());
  }
  // The bound and the simulation's node times are a few hundred double
  // operations each from their exact values (a relative 2^-53 each), far
  // within a relative 10^-12 of them: give that back too.
  return best * (1 - 1e-12);
}

}  // namespace orrery::gen
