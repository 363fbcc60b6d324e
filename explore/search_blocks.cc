#include "explore/search_blocks.h"

#include <algorithm>

namespace orrery::gen {
namespace {

int64_t MoeLayersBelow(const ModelDesc& m, int64_t j) {  // MoE layers among [0, j)
  return m.experts > 0 ? j / m.moe_layer_freq : 0;
}
}  // namespace

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

LayerCompute LayerComputeOf(const Blocks& k, const Strategy& s, const CostModel& c) {
  const Roofline roof(c);
  LayerCompute t;
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
  return t;
}

StageCompute StageComputeOf(const ModelDesc& m, const Strategy& s, const CostModel& c, const Blocks& k,
                            const LayerCompute& lc, int64_t stage) {
  const Roofline roof(c);
  const StageLayerCount n = LayersOf(m, s, stage);
  StageCompute t;
  // Layers (full recomputation runs their forward twice), then the output layer.
  t.fwd = n.dense * (lc.attn_f + lc.mlp_f) + n.moe * (lc.attn_f + lc.moe_f);
  t.bwd = n.dense * (lc.attn_b + lc.mlp_b) + n.moe * (lc.attn_b + lc.moe_b);
  t.total = lc.passes_f * t.fwd + t.bwd;
  if (stage == s.pp - 1 && s.lm_head)
    t.total += roof(k.logit_ops, k.logit_bytes) + roof(2.0 * k.logit_ops, 2.0 * k.logit_bytes);
  return t;
}

}  // namespace orrery::gen
