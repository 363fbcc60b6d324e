#include "explore/search_cost.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/tick.h"
#include "core/units.h"
#include "explore/search_blocks.h"
#include "gen/placement.h"

namespace orrery::gen {
namespace {

// The network an axis (or a set of axes) communicates over: the slowest
// dimension its group spans (lowest per-NPU bandwidth), with the highest
// neighbour latency among them (hops × link latency: a switch is two links
// away, a ring neighbour one) plus the endpoint delay. `splits`: chunks per
// collective. bytes_per_s == 0: the group is one rank.
// A collective the system layer runs per dimension (the whole network; under
// the hierarchical model a group of whole dimensions, or a grid over several:
// RunsPerDimension) is instead one ring phase per spanned dimension, lowest
// first, each over the group's members along it with the buffer the phases
// before it left (`phases`, in order).
struct Phase {
  int64_t n = 1;
  double bytes_per_s = 0, latency_s = 0;
};
struct AxisLink {
  double bytes_per_s = 0;
  double latency_s = 0;
  double splits = 1;
  std::vector<Phase> phases;
};

double LinkBytesPerS(const Dim& d) {
  return BytesPerNsToBytesPerSecond(GiBpsToBytesPerNs(d.bandwidth_gbps) * d.links_per_npu);
}
double HopS(const Dim& d) { return (d.block == Block::kSwitch ? 2 : 1) * d.latency_ns * kSecondsPerNs; }

// `p2p`: the axis's messages are point to point (CP's ring, PP), each
// charged on the lowest dimension it crosses under ASTRA-sim's model, which
// for a neighbour along the axis is the axis's lowest dimension.
AxisLink LinkOf(const Strategy& s, AxisSet set, const CostModel& c, bool p2p) {
  const std::array<int64_t, kNumAxes> sizes{s.tp, s.cp, s.ep, s.dp, s.pp};
  uint32_t mask = SpannedDims(sizes, s.order, set, c.dims);
  int64_t group = 1;
  for (int a = 0; a < kNumAxes; ++a) group *= (set & Axes(static_cast<Axis>(a))) ? sizes[a] : 1;
  // ASTRA-sim's model: a group smaller than the network is charged on its lowest dimension.
  if (!c.hierarchical_groups && (p2p || group < s.npus)) mask &= ~mask + 1;
  AxisLink link;
  int64_t whole = 1;  // NPUs of the spanned dimensions
  for (size_t k = 0; k < c.dims.size() && k < 32; ++k) {
    if (!(mask & (1u << k))) continue;
    const Dim& d = c.dims[k];
    link.bytes_per_s = link.bytes_per_s == 0 ? LinkBytesPerS(d) : std::min(link.bytes_per_s, LinkBytesPerS(d));
    link.latency_s = std::max(link.latency_s, HopS(d));
    whole *= d.npus;
  }
  link.latency_s += c.endpoint_delay_s;
  link.splits = std::max(c.splits, 1);
  // Under the hierarchical model a grid over several dimensions runs per
  // dimension too, each phase over the group's members along it.
  GroupDims grid;
  const bool gridded = c.hierarchical_groups && !p2p && RunsPerDimensionIfChained(sizes, s.order, set, c.dims, &grid);
  const bool per_dimension = c.hierarchical_groups ? whole == group || gridded : group == s.npus;
  if (!p2p && per_dimension && std::popcount(mask) > 1) {
    for (size_t k = 0; k < c.dims.size() && k < 32; ++k) {
      if (!(mask & (1u << k))) continue;
      const int64_t n = gridded ? grid.count[k] : c.dims[k].npus;
      link.phases.push_back({n, LinkBytesPerS(c.dims[k]), HopS(c.dims[k]) + c.endpoint_delay_s});
    }
  }
  return link;
}

// A ring collective that moves `share`·(n−1)/n of `bytes` per rank in
// `share`·(n−1) steps (all-reduce 2, the others 1), as `splits` chunks each
// paying every step's latency. Per dimension, each phase works on the buffer
// the phases before it left (bytes / their NPUs), and the chunks flow through
// the phases as a pipeline (one chunk per dimension at a time): a chunk's
// phase k takes T_k, and the collective Σ_k T_k + (splits − 1)·max_k T_k.
double RingS(double bytes, int64_t n, const AxisLink& l, double share) {
  if (n <= 1 || l.bytes_per_s == 0) return 0;
  if (l.phases.empty()) {
    return share * (n - 1) / n * bytes / l.bytes_per_s + l.splits * share * (n - 1) * l.latency_s;
  }
  double sum = 0, slowest = 0, b = bytes;
  for (const Phase& p : l.phases) {
    const double t = share * (p.n - 1) / p.n * b / l.splits / p.bytes_per_s + share * (p.n - 1) * p.latency_s;
    sum += t;
    slowest = std::max(slowest, t);
    b /= static_cast<double>(p.n);
  }
  return sum + (l.splits - 1) * slowest;
}

// Ring collectives over n ranks, `bytes` the whole buffer: all-reduce moves
// 2(n−1)/n of it through each NPU's link in 2(n−1) steps; reduce-scatter,
// all-gather and all-to-all (n−1)/n in n−1 steps; each of the `splits`
// chunks pays every step's latency.
double AllReduceS(double bytes, int64_t n, const AxisLink& l) { return RingS(bytes, n, l, 2); }
double HalfS(double bytes, int64_t n, const AxisLink& l) { return RingS(bytes, n, l, 1); }  // RS, AG, all-to-all
double P2pS(double bytes, const AxisLink& l) { return l.bytes_per_s == 0 ? 0 : bytes / l.bytes_per_s + l.latency_s; }

// Per-microbatch times of one stage's rank (seconds).
struct StageTimes {
  double compute = 0, fwd = 0, bwd = 0, tp = 0, cp = 0, ep = 0, pp = 0, zero3 = 0, grads = 0;
};

// The network of each axis and of the two data-parallel sets.
struct AxisLinks {
  AxisLink tp, cp, ep, pp, ddp, edp;
};

AxisLinks LinksOf(const Strategy& s, const CostModel& c) {
  auto link = [&](AxisSet set, bool p2p) { return LinkOf(s, set, c, p2p); };
  return {link(Axes(Axis::kTp), false), link(Axes(Axis::kCp), true), link(Axes(Axis::kEp), false),
          link(Axes(Axis::kPp), true),  link(kDenseDp, false),       link(kExpertDp, false)};
}

// One layer of one microbatch on a rank (seconds), the same on every stage.
struct LayerTimes : LayerCompute {
  double tp = 0, ep = 0, cp = 0;  // communication
};

LayerTimes LayerTimesOf(const Blocks& k, const Strategy& s, const CostModel& c, const AxisLinks& l) {
  LayerTimes t;
  static_cast<LayerCompute&>(t) = LayerComputeOf(k, s, c);
  const double sel = s.recompute == Recompute::kSelective ? static_cast<double>(k.core) : 0;
  // Per layer and microbatch: TP collectives (2 per forward, 2 backward; SP's
  // all-gather + reduce-scatter pair takes an all-reduce's time), EP
  // all-to-alls (MoE layers: dispatch + combine per pass), CP ring steps.
  t.tp = (2 * t.passes_f + 2) * AllReduceS(k.act, s.tp, l.tp);
  t.ep = (2 * t.passes_f + 2) * HalfS(k.a2a, s.ep, l.ep);
  if (s.cp > 1) {
    const double step_f = static_cast<double>(k.core_step) / c.peak_flops_per_s;
    const double fwd = std::max(0.0, P2pS(k.kv_bytes, l.cp) - step_f);
    const double bwd = std::max(0.0, P2pS(2.0 * k.kv_bytes, l.cp) - (2 * step_f + sel / s.cp / c.peak_flops_per_s));
    t.cp = (s.cp - 1) * (t.passes_f * fwd + bwd);
  }
  return t;
}

// A stage rank's parameter bytes: dense ones and experts'.
struct ParamBytes {
  double dense = 0, expert = 0;
};

// Gradients: 2 bytes per parameter of the rank, dense ones over cp·ep·dp,
// expert ones over cp·dp. ZeRO-0 all-reduce, ZeRO-1/2 reduce-scatter +
// all-gather (the same time), ZeRO-3 reduce-scatter only. The buckets'
// collectives are issued one after another during the last backward and
// run side by side on the network: their bytes share the link, their step
// latencies overlap, so the latency is paid once, as by one collective.
double GradientS(const Strategy& s, const ParamBytes& p, const AxisLinks& l) {
  const int64_t dense_dp = s.cp * s.ep * s.dp, expert_dp = s.cp * s.dp;
  auto reduce = [&](double bytes, int64_t d, const AxisLink& link) {
    if (d <= 1 || bytes == 0) return 0.0;
    return RingS(bytes, d, link, s.zero == 3 ? 1.0 : 2.0);
  };
  return reduce(p.dense, dense_dp, l.ddp) + reduce(p.expert, expert_dp, l.edp);
}

// ZeRO-3: each layer's parameters gathered before every forward and
// backward; a gather overlaps the layer before it (one layer of prefetch,
// within one model chunk's pass), so the first gather of each chunk's pass
// is exposed: V of them per pass with interleaving.
double Zero3S(const Strategy& s, const StageLayerCount& n, const ParamBytes& p, const StageTimes& t, double passes_f,
              double v, const AxisLinks& l) {
  const double layers = static_cast<double>(n.dense + n.moe);
  if (s.zero != 3 || layers <= 0) return 0;
  const int64_t dense_dp = s.cp * s.ep * s.dp, expert_dp = s.cp * s.dp;
  const double dense_layer = layers > 0 ? p.dense / layers : 0;  // per layer, embeddings spread
  const double expert_layer = n.moe > 0 ? p.expert / n.moe : 0;
  const double ag = HalfS(dense_layer, dense_dp, l.ddp) +
                    (n.moe > 0 ? HalfS(expert_layer, expert_dp, l.edp) * n.moe / layers : 0);
  const double layer_f = t.fwd / layers, layer_b = t.bwd / layers;
  const double firsts = std::min(v, layers);
  const double pass_f = firsts * ag + (layers - firsts) * std::max(0.0, ag - layer_f);
  const double pass_b = firsts * ag + (layers - firsts) * std::max(0.0, ag - layer_b);
  return passes_f * pass_f + pass_b;
}

// One microbatch on a rank of `stage`; `v` model chunks per rank.
StageTimes StageTimesOf(const ModelDesc& m, const Strategy& s, const CostModel& c, const Blocks& k,
                        const LayerTimes& lt, const AxisLinks& l, int64_t stage, double v) {
  const StageLayerCount n = LayersOf(m, s, stage);
  const double layers = static_cast<double>(n.dense + n.moe);
  StageTimes t;
  const StageCompute sc = StageComputeOf(m, s, c, k, lt, stage);
  t.fwd = sc.fwd;
  t.bwd = sc.bwd;
  t.compute = sc.total;
  t.tp = layers * lt.tp;
  t.ep = n.moe * lt.ep;
  t.cp = layers * lt.cp;
  // One activation in and one gradient back per chunk the rank holds.
  t.pp = s.pp > 1 ? 2 * v * P2pS(k.act, l.pp) : 0;
  const RankParamSplit split = RankParamsSplit(m, s, stage);
  const ParamBytes p{static_cast<double>(split.dense) * s.bytes_per_value,
                     static_cast<double>(split.expert) * s.bytes_per_value};
  t.grads = GradientS(s, p, l);
  t.zero3 = Zero3S(s, n, p, t, lt.passes_f, v, l);
  return t;
}

}  // namespace

CostModel CostModelOf(const AstraSystemConfig& sys, std::vector<Dim> dims) {
  CostModel c;
  c.peak_flops_per_s = TflopsToFlopsPerSecond(sys.peak_perf_tflops);
  c.mem_bytes_per_s = BytesPerNsToBytesPerSecond(sys.local_mem_bw);
  c.dims = std::move(dims);
  c.splits = sys.preferred_dataset_splits;
  c.endpoint_delay_s = static_cast<double>(sys.endpoint_delay_ns) * kSecondsPerNs;
  c.hierarchical_groups = sys.group_collective_model == "hierarchical";
  c.active_chunks = sys.active_chunks_per_dimension;
  c.chunks_by_priority = sys.intra_dimension_scheduling != "SmallestFirst";
  for (const auto* list : {&sys.all_reduce, &sys.all_gather, &sys.reduce_scatter}) {
    for (const CollectiveImplSpec& a : *list) c.ring_collectives &= a.kind == AlgoKind::kRing && !a.one;
  }
  return c;
}

Flops StageRankFlops(const ModelDesc& m, const Strategy& s, int64_t stage) {
  const Blocks k = BlocksOf(m, s);
  const StageLayerCount n = LayersOf(m, s, stage);
  const Flops fwd_attn = k.attn_ops, fwd_dense = fwd_attn + k.mlp_ops,
              fwd_moe = fwd_attn + k.router_ops + k.experts_ops;
  const Flops fwd = fwd_dense * n.dense + fwd_moe * n.moe;
  Flops mb = 3 * fwd;
  if (s.recompute == Recompute::kSelective) mb += static_cast<Flops>(k.core) * (n.dense + n.moe);
  if (s.recompute == Recompute::kFull) mb += fwd;
  if (stage == s.pp - 1 && s.lm_head) mb += 3 * static_cast<Flops>(k.logit_ops);
  return mb * static_cast<Flops>(s.microbatches);
}

SymbolicCost EstimateCost(const ModelDesc& m, const Strategy& s, const CostModel& c) {
  const Blocks k = BlocksOf(m, s);
  const double v = s.schedule == Schedule::kInterleaved ? static_cast<double>(s.chunks) : 1.0;
  const AxisLinks links = LinksOf(s, c);
  const LayerTimes lt = LayerTimesOf(k, s, c, links);
  SymbolicCost best;
  double slowest_mb = -1, dp_exposed = 0;
  for (int64_t stage : {int64_t{0}, s.pp - 1}) {
    const StageTimes t = StageTimesOf(m, s, c, k, lt, links, stage, v);
    const double mb = t.compute + t.tp + t.cp + t.ep + t.pp + t.zero3;
    // The last microbatch's backward (of the layers) hides the gradient reduction.
    dp_exposed = std::max(dp_exposed, std::max(0.0, t.grads - t.bwd));
    if (mb > slowest_mb) {
      slowest_mb = mb;
      const double mbs = static_cast<double>(s.microbatches);
      best.flops_per_rank = StageRankFlops(m, s, stage);
      best.compute_s = mbs * t.compute;
      best.tp_s = mbs * t.tp;
      best.cp_s = mbs * t.cp;
      best.ep_s = mbs * t.ep;
      best.pp_s = mbs * t.pp;
      best.zero3_s = mbs * t.zero3;
    }
  }
  const double p = static_cast<double>(s.pp), mbs = static_cast<double>(s.microbatches);
  best.bubble = (p - 1) / (mbs * v + p - 1);
  best.bubble_s = slowest_mb * (p - 1) / v;
  best.dp_s = dp_exposed;
  best.total_s = best.compute_s + best.tp_s + best.cp_s + best.ep_s + best.pp_s + best.zero3_s + best.bubble_s +
                 best.dp_s;
  best.lower_s = LowerBoundS(m, s, c);
  return best;
}

double SpearmanRho(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2 || y.size() != n) return std::numeric_limits<double>::quiet_NaN();
  auto ranks = [n](const std::vector<double>& v) {
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> r(n);
    for (size_t i = 0; i < n;) {
      size_t j = i;
      while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) ++j;
      const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;  // ranks 1-based
      for (size_t k = i; k <= j; ++k) r[idx[k]] = mean;
      i = j + 1;
    }
    return r;
  };
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double mean = (static_cast<double>(n) + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace orrery::gen
