#include "gen/formulas.h"

namespace orrery::gen {

std::string FlopsText(Flops f) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(f % 10)));
    f /= 10;
  } while (f != 0);
  return s;
}

Flops KorthikantiFlops(const ModelDesc& m, uint64_t batch, Recompute r) {
  const Flops B = batch, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
  const Flops gemm = B * s * l * h * h, attn = B * s * s * l * h, logit = 6 * B * s * h * V;
  switch (r) {
    case Recompute::kNone: return 72 * gemm + 12 * attn + logit;
    case Recompute::kSelective: return 72 * gemm + 16 * attn + logit;
    case Recompute::kFull: return 96 * gemm + 16 * attn + logit;
  }
  return 0;
}

Flops ModelFlops(const ModelDesc& m, uint64_t batch, Recompute r, bool lm_head) {
  const Flops B = batch, s = m.seq_len, h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const Flops mats = m.gated_ffn ? 3 : 2;
  Flops fwd_layers = 0, core = 0;
  for (int64_t j = 0; j < m.layers; ++j) {
    const Flops attn_core = 4 * s * s * q;
    Flops layer = 2 * s * h * (q + 2 * kv) + 2 * s * q * h + attn_core;
    if (IsMoeLayer(m, j)) {
      layer += 2 * s * h * static_cast<Flops>(m.experts) +
               2 * s * h * static_cast<Flops>(m.expert_ffn) * mats * static_cast<Flops>(m.top_k + m.shared_experts);
    } else {
      layer += 2 * s * h * static_cast<Flops>(m.ffn) * mats;
    }
    fwd_layers += layer;
    core += attn_core;
  }
  const Flops logits = lm_head ? 2 * s * h * static_cast<Flops>(m.vocab) : 0;
  Flops total = 3 * B * (fwd_layers + logits);
  if (r == Recompute::kSelective) total += B * core;
  if (r == Recompute::kFull) total += B * fwd_layers;
  return total;
}

uint64_t ActivationBytesPerLayer(const ModelDesc& m, uint64_t b, uint64_t t, bool sp, Recompute r) {
  return ActivationBytesPerLayer(m.seq_len, m.hidden, m.heads, b, t, sp, r);
}

uint64_t ActivationBytesPerLayer(uint64_t s, uint64_t h, uint64_t a, uint64_t b, uint64_t t, bool sp, Recompute r) {
  const uint64_t sbh = s * b * h;
  const uint64_t attn = 5 * a * s * s * b / t;  // sbh·5as/(ht)
  if (r == Recompute::kFull) return 2 * sbh;
  const uint64_t linear = sp ? 34 * sbh / t : 10 * sbh + 24 * sbh / t;
  return r == Recompute::kSelective ? linear : linear + attn;
}

uint64_t ModelStateBytes(uint64_t psi, int zero_stage, uint64_t d) {
  auto ceil_div = [](uint64_t x, uint64_t y) { return (x + y - 1) / y; };
  switch (zero_stage) {
    case 0: return 16 * psi;
    case 1: return 4 * psi + ceil_div(12 * psi, d);
    case 2: return 2 * psi + ceil_div(14 * psi, d);
    default: return ceil_div(16 * psi, d);
  }
}

uint64_t OptimizerBytes(uint64_t psi, int zero_stage, uint64_t d) {
  return zero_stage == 0 ? 12 * psi : (12 * psi + d - 1) / d;
}

double BubbleFraction(int64_t p, int64_t m) { return static_cast<double>(p - 1) / static_cast<double>(m + p - 1); }

}  // namespace orrery::gen
