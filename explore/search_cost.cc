#include "explore/search_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/tick.h"
#include "core/units.h"
#include "gen/placement.h"

namespace orrery::gen {
namespace {

// The network an axis (or a set of axes) communicates over: the slowest
// dimension its group spans (lowest per-NPU bandwidth), with the highest
// neighbour latency among them (hops × link latency: a switch is two links
// away, a ring neighbour one) plus the endpoint delay. `splits`: chunks per
// collective. bytes_per_s == 0: the group is one rank.
struct AxisLink {
  double bytes_per_s = 0;
  double latency_s = 0;
  double splits = 1;
};

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
  for (size_t k = 0; k < c.dims.size() && k < 32; ++k) {
    if (!(mask & (1u << k))) continue;
    const Dim& d = c.dims[k];
    const double bw = BytesPerNsToBytesPerSecond(GiBpsToBytesPerNs(d.bandwidth_gbps) * d.links_per_npu);
    link.bytes_per_s = link.bytes_per_s == 0 ? bw : std::min(link.bytes_per_s, bw);
    const double hops = d.block == Block::kSwitch ? 2 : 1;
    link.latency_s = std::max(link.latency_s, hops * d.latency_ns * kSecondsPerNs);
  }
  link.latency_s += c.endpoint_delay_s;
  link.splits = std::max(c.splits, 1);
  return link;
}

// Ring collectives over n ranks, `bytes` the whole buffer: all-reduce moves
// 2(n−1)/n of it through each NPU's link in 2(n−1) steps; reduce-scatter,
// all-gather and all-to-all (n−1)/n in n−1 steps; each of the `splits`
// chunks pays every step's latency.
double AllReduceS(double bytes, int64_t n, const AxisLink& l) {
  if (n <= 1 || l.bytes_per_s == 0) return 0;
  return 2.0 * (n - 1) / n * bytes / l.bytes_per_s + l.splits * 2.0 * (n - 1) * l.latency_s;
}
double HalfS(double bytes, int64_t n, const AxisLink& l) {  // reduce-scatter, all-gather, all-to-all
  if (n <= 1 || l.bytes_per_s == 0) return 0;
  return 1.0 * (n - 1) / n * bytes / l.bytes_per_s + l.splits * (n - 1) * l.latency_s;
}
// What no ring collective can go below, whatever its chunks overlap: its
// bytes through the NPU's link, and one chunk's steps, each a message that
// pays the latency after the one before. `steps_per_rank`: 2 for an
// all-reduce, 1 for reduce-scatter, all-gather.
double RingLowerS(double bytes, int64_t n, const AxisLink& l, double steps_per_rank) {
  if (n <= 1 || l.bytes_per_s == 0) return 0;
  return steps_per_rank * (n - 1) / n * bytes / l.bytes_per_s + steps_per_rank * (n - 1) * l.latency_s;
}
double P2pS(double bytes, const AxisLink& l) { return l.bytes_per_s == 0 ? 0 : bytes / l.bytes_per_s + l.latency_s; }

// One rank's blocks for one microbatch, as StageGen builds them (ops and the
// bytes the roofline sees), forward pass.
struct Blocks {
  uint64_t act = 0;  // b·(s/cp)·h·2: TP collectives, PP messages
  uint64_t attn_ops = 0, attn_bytes = 0, core_step = 0, core = 0, kv_bytes = 0;
  uint64_t mlp_ops = 0, mlp_bytes = 0;
  uint64_t router_ops = 0, router_bytes = 0, experts_ops = 0, experts_bytes = 0, a2a = 0;
  uint64_t logit_ops = 0, logit_bytes = 0;
};

Blocks BlocksOf(const ModelDesc& m, const Strategy& s) {
  Blocks k;
  const uint64_t b = s.microbatch_size, sq = m.seq_len / s.cp, h = m.hidden, t = s.tp, bpv = s.bytes_per_value;
  const uint64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim, mats = m.gated_ffn ? 3 : 2;
  const uint64_t tok = b * sq;
  k.act = tok * h * bpv;
  k.core_step = 4 * b * sq * sq * q / t;
  k.core = k.core_step * s.cp;
  k.attn_ops = 2 * tok * h * (q + 2 * kv) / t + 2 * tok * q * h / t + k.core;
  k.attn_bytes = (h * (q + 2 * kv) + q * h) / t * bpv + 2 * k.act;
  k.kv_bytes = 2 * tok * kv / t * bpv;
  k.mlp_ops = 2 * tok * h * m.ffn * mats / t;
  k.mlp_bytes = mats * h * m.ffn / t * bpv + 2 * k.act;
  if (m.experts > 0) {
    const uint64_t fe = m.expert_ffn, e = m.experts;
    k.router_ops = 2 * tok * h * e / t + 2 * tok * h * fe * mats * m.shared_experts / t;
    k.router_bytes = (h * e + m.shared_experts * mats * h * fe) / t * bpv + 2 * k.act;
    k.a2a = tok * m.top_k * h * bpv;
    k.experts_ops = 2 * tok * m.top_k * h * fe * mats / t;
    k.experts_bytes = (e / s.ep) * mats * h * fe / t * bpv + 2 * k.a2a;
  }
  k.logit_ops = 2 * tok * h * m.vocab / t;
  k.logit_bytes = (m.vocab * h / t + tok * h + tok * m.vocab / t) * bpv;
  return k;
}

// Layers a rank of `stage` holds: dense and MoE ones (interleaved: its V chunks).
struct StageLayerCount {
  int64_t dense = 0, moe = 0;
};
int64_t MoeLayersBelow(const ModelDesc& m, int64_t j) {  // MoE layers among [0, j)
  return m.experts > 0 ? j / m.moe_layer_freq : 0;
}
StageLayerCount LayersOf(const ModelDesc& m, const Strategy& s, int64_t stage) {
  const bool inter = s.schedule == Schedule::kInterleaved;
  const int64_t chunks = inter ? s.chunks : 1, vstages = s.pp * chunks;
  StageLayerCount c;
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t v = chunk * s.pp + stage, first = StageFirstLayer(m, vstages, v), n = StageLayers(m, vstages, v);
    const int64_t moe = MoeLayersBelow(m, first + n) - MoeLayersBelow(m, first);
    c.moe += moe;
    c.dense += n - moe;
  }
  return c;
}

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

// Per-microbatch times of one stage's rank (seconds).
struct StageTimes {
  double compute = 0, fwd = 0, bwd = 0, tp = 0, cp = 0, ep = 0, pp = 0, zero3 = 0, grads = 0;
  double chain_lower = 0;  // TP collectives and ZeRO-3's first gathers at their RingLowerS
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
struct LayerTimes {
  double attn_f = 0, attn_b = 0, mlp_f = 0, mlp_b = 0, moe_f = 0, moe_b = 0;  // compute
  double passes_f = 1;            // forwards per microbatch (full recomputation: 2)
  double tp = 0, ep = 0, cp = 0;  // communication
  double tp_lower = 0;            // the TP collectives at RingLowerS
  double cp_lower = 0;            // ring-attention messages not hidden by their step's core, at least
};

LayerTimes LayerTimesOf(const Blocks& k, const Strategy& s, const CostModel& c, const AxisLinks& l) {
  const Roofline roof(c);
  LayerTimes t;
  // Forward and backward of one layer (backward: twice the ops and bytes;
  // selective recomputation adds one forward attention core).
  const double sel = s.recompute == Recompute::kSelective ? static_cast<double>(k.core) : 0;
  t.attn_f = roof(k.attn_ops, k.attn_bytes);
  t.attn_b = roof(2.0 * k.attn_ops + sel, 2.0 * k.attn_bytes);
  t.mlp_f = roof(k.mlp_ops, k.mlp_bytes);
  t.mlp_b = roof(2.0 * k.mlp_ops, 2.0 * k.mlp_bytes);
  t.moe_f = roof(k.router_ops, k.router_bytes) + roof(k.experts_ops, k.experts_bytes);
  t.moe_b = roof(2.0 * k.router_ops, 2.0 * k.router_bytes) + roof(2.0 * k.experts_ops, 2.0 * k.experts_bytes);
  t.passes_f = s.recompute == Recompute::kFull ? 2 : 1;
  // Per layer and microbatch: TP collectives (2 per forward, 2 backward; SP's
  // all-gather + reduce-scatter pair takes an all-reduce's time), EP
  // all-to-alls (MoE layers: dispatch + combine per pass), CP ring steps.
  t.tp = (2 * t.passes_f + 2) * AllReduceS(k.act, s.tp, l.tp);
  t.tp_lower = (2 * t.passes_f + 2) * RingLowerS(k.act, s.tp, l.tp, 2);
  t.ep = (2 * t.passes_f + 2) * HalfS(k.a2a, s.ep, l.ep);
  if (s.cp > 1) {
    const double step_f = static_cast<double>(k.core_step) / c.peak_flops_per_s;
    const double fwd = std::max(0.0, P2pS(k.kv_bytes, l.cp) - step_f);
    const double bwd = std::max(0.0, P2pS(2.0 * k.kv_bytes, l.cp) - (2 * step_f + sel / s.cp / c.peak_flops_per_s));
    t.cp = (s.cp - 1) * (t.passes_f * fwd + bwd);
    // The lower bound: a step's core waits for its K/V block, sent when the
    // step before received its own, so each step takes at least the longer
    // of its core (the node's roofline) and the message (bytes at the link's
    // bandwidth and the hops' latency, no endpoint delay).
    const double hop_s = std::max(0.0, l.cp.latency_s - c.endpoint_delay_s);
    auto msg = [&](double bytes) { return l.cp.bytes_per_s == 0 ? 0 : bytes / l.cp.bytes_per_s + hop_s; };
    const double core_f = roof(static_cast<double>(k.core_step), 2.0 * k.kv_bytes);
    const double core_b = roof(2.0 * k.core_step + sel / s.cp, 4.0 * k.kv_bytes);
    t.cp_lower = (s.cp - 1) *
                 (t.passes_f * std::max(0.0, msg(k.kv_bytes) - core_f) + std::max(0.0, msg(2.0 * k.kv_bytes) - core_b));
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
    if (link.bytes_per_s == 0) return 0.0;
    const double body = (s.zero == 3 ? 1.0 : 2.0) * (d - 1) / d * bytes / link.bytes_per_s;
    return body + (s.zero == 3 ? 1.0 : 2.0) * (d - 1) * link.latency_s * link.splits;
  };
  return reduce(p.dense, dense_dp, l.ddp) + reduce(p.expert, expert_dp, l.edp);
}

// ZeRO-3: each layer's parameters gathered before every forward and
// backward; a gather overlaps the layer before it (one layer of prefetch,
// within one model chunk's pass), so the first gather of each chunk's pass
// is exposed: V of them per pass with interleaving.
// `first_lower`: the exposed first gathers at RingLowerS (on the rank's chain).
double Zero3S(const Strategy& s, const StageLayerCount& n, const ParamBytes& p, const StageTimes& t, double passes_f,
              double v, const AxisLinks& l, double* first_lower) {
  const double layers = static_cast<double>(n.dense + n.moe);
  if (s.zero != 3 || layers <= 0) return 0;
  const int64_t dense_dp = s.cp * s.ep * s.dp, expert_dp = s.cp * s.dp;
  const double dense_layer = layers > 0 ? p.dense / layers : 0;  // per layer, embeddings spread
  const double expert_layer = n.moe > 0 ? p.expert / n.moe : 0;
  const double ag = HalfS(dense_layer, dense_dp, l.ddp) +
                    (n.moe > 0 ? HalfS(expert_layer, expert_dp, l.edp) * n.moe / layers : 0);
  const double layer_f = t.fwd / layers, layer_b = t.bwd / layers;
  const double firsts = std::min(v, layers);
  const double ag_lower = RingLowerS(dense_layer, dense_dp, l.ddp, 1) +
                          (n.moe > 0 ? RingLowerS(expert_layer, expert_dp, l.edp, 1) * n.moe / layers : 0);
  *first_lower = (passes_f + 1) * firsts * ag_lower;
  const double pass_f = firsts * ag + (layers - firsts) * std::max(0.0, ag - layer_f);
  const double pass_b = firsts * ag + (layers - firsts) * std::max(0.0, ag - layer_b);
  return passes_f * pass_f + pass_b;
}

// One microbatch on a rank of `stage`; `v` model chunks per rank.
StageTimes StageTimesOf(const ModelDesc& m, const Strategy& s, const CostModel& c, const Blocks& k,
                        const LayerTimes& lt, const AxisLinks& l, int64_t stage, double v) {
  const Roofline roof(c);
  const StageLayerCount n = LayersOf(m, s, stage);
  const double layers = static_cast<double>(n.dense + n.moe);
  StageTimes t;
  // Layers (full recomputation runs their forward twice), then the output layer.
  t.fwd = n.dense * (lt.attn_f + lt.mlp_f) + n.moe * (lt.attn_f + lt.moe_f);
  t.bwd = n.dense * (lt.attn_b + lt.mlp_b) + n.moe * (lt.attn_b + lt.moe_b);
  t.compute = lt.passes_f * t.fwd + t.bwd;
  if (stage == s.pp - 1 && s.lm_head)
    t.compute += roof(k.logit_ops, k.logit_bytes) + roof(2.0 * k.logit_ops, 2.0 * k.logit_bytes);
  t.tp = layers * lt.tp;
  t.ep = n.moe * lt.ep;
  t.cp = layers * lt.cp;
  // One activation in and one gradient back per chunk the rank holds.
  t.pp = s.pp > 1 ? 2 * v * P2pS(k.act, l.pp) : 0;
  const RankParamSplit split = RankParamsSplit(m, s, stage);
  const ParamBytes p{static_cast<double>(split.dense) * s.bytes_per_value,
                     static_cast<double>(split.expert) * s.bytes_per_value};
  t.grads = GradientS(s, p, l);
  t.zero3 = Zero3S(s, n, p, t, lt.passes_f, v, l, &t.chain_lower);
  t.chain_lower += layers * (lt.tp_lower + lt.cp_lower);
  return t;
}

// The compute of one microbatch's forward and backward through the virtual
// stages before the last rank's first one (p−1 of them, each at least
// ⌊L/(p·V)⌋ layers): the last rank starts its first forward after their
// forwards and its last backward is followed by theirs.
double PipelineFillS(const ModelDesc& m, const Strategy& s, const LayerTimes& lt) {
  if (s.pp <= 1) return 0;
  const int64_t v = s.schedule == Schedule::kInterleaved ? s.chunks : 1;
  const double layers = static_cast<double>(m.layers / (s.pp * v));
  const double dense = lt.passes_f * (lt.attn_f + lt.mlp_f) + lt.attn_b + lt.mlp_b;
  const double moe = lt.passes_f * (lt.attn_f + lt.moe_f) + lt.attn_b + lt.moe_b;
  return static_cast<double>(s.pp - 1) * layers * (m.experts > 0 ? std::min(dense, moe) : dense);
}

// The simulation truncates each compute node's time and each message's delay
// to whole ns, so a chain of N of them may take up to N ns less than the real
// sums above: the lower bound gives back 1 ns for every node and message that
// could be on a rank's chain, counted generously (every layer's forward,
// recomputation and backward of every microbatch and of the pipeline's fill,
// each with its blocks, ring-attention steps, TP steps and ZeRO-3 steps).
double TruncationSlackS(const ModelDesc& m, const Strategy& s, double passes_f) {
  const double per_layer_pass = 64 + 4.0 * s.cp + 8.0 * s.tp + 4.0 * s.cp * s.ep * s.dp;
  const double chains = static_cast<double>(s.microbatches + s.pp);
  return kSecondsPerNs * chains * (static_cast<double>(m.layers) * (passes_f + 1) * per_layer_pass + 64);
}

}  // namespace

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
  const double fill = PipelineFillS(m, s, lt);
  for (int64_t stage : {int64_t{0}, s.pp - 1}) {
    const StageTimes t = StageTimesOf(m, s, c, k, lt, links, stage, v);
    // The lower bound: the rank's compute, TP collectives, ZeRO-3's first
    // gathers and the ring-attention waits, one after another on its chain (each collective at least its
    // ring's bandwidth and one chunk's step latencies), and on the last stage
    // the first microbatch's way in and its last one's way out.
    const double own = static_cast<double>(s.microbatches) * (t.compute + t.chain_lower);
    best.lower_s = std::max(best.lower_s, own + (stage == s.pp - 1 ? fill : 0));
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
  best.lower_s = std::max(0.0, best.lower_s - TruncationSlackS(m, s, lt.passes_f));
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
