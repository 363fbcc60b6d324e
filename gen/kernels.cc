#include "gen/kernels.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace orrery::gen {
namespace {

constexpr uint64_t kValue = 2;  // bytes of a bf16 activation, weight or gradient
constexpr uint64_t kMask = 1;   // bytes of a dropout mask element

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The useful share of the tile slots a GEMM's waves occupy.
double Quantised(uint64_t m, uint64_t n, uint64_t batch, uint64_t tm, uint64_t tn, uint64_t sms) {
  const uint64_t tiles = CeilDiv(m, tm) * CeilDiv(n, tn) * batch;
  const uint64_t waves = CeilDiv(tiles, sms);
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(batch) /
         (static_cast<double>(waves) * static_cast<double>(sms) * static_cast<double>(tm) * static_cast<double>(tn));
}

Kernel Make(const char* name, uint64_t flops, uint64_t bytes, double ce, double me) {
  return Kernel{name, flops, bytes, static_cast<float>(ce), static_cast<float>(me)};
}

// Element-wise tensors of a layer (bytes of one bf16 copy).
struct Tensors {
  uint64_t tokens;   // T = b·s
  uint64_t elem;     // E·h: the hidden tensor an element-wise kernel sees (E = T/t with SP)
  uint64_t rope;     // Q and K of the rank: T·(q + kv)/t
  uint64_t probs;    // attention probabilities of the rank: b·(a/t)·s·s
  uint64_t ffn_in;   // the activation's input: T·f·(2 gated | 1)/t
  uint64_t ffn_out;  // its output: T·f/t
};

Tensors TensorsOf(const LayerShape& l) {
  Tensors x{};
  x.tokens = l.b * l.s;
  x.elem = (l.sp ? x.tokens / l.t : x.tokens) * l.h;
  x.rope = l.rope ? x.tokens * (l.q + l.kv) / l.t : 0;
  x.probs = l.d ? l.b * (l.q / l.d / l.t) * l.s * l.s : 0;
  x.ffn_in = x.tokens * l.f * (l.gated ? 2 : 1) / l.t;
  x.ffn_out = x.tokens * l.f / l.t;
  return x;
}

}  // namespace

double GemmEfficiency(const DeviceModel& d, uint64_t m, uint64_t n, uint64_t k, uint64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return d.gemm_efficiency;
  const uint64_t sms = static_cast<uint64_t>(d.sms), tm = static_cast<uint64_t>(d.tile_m),
                 tn = static_cast<uint64_t>(d.tile_n);
  const double depth = static_cast<double>(std::max<uint64_t>(k, kGemmMinDepth));
  return d.gemm_efficiency * std::max(Quantised(m, n, batch, tm, tn, sms), Quantised(m, n, batch, tn, tm, sms)) *
         depth / (depth + d.gemm_k_overhead);
}

double AttentionEfficiency(const DeviceModel& d, uint64_t s, bool backward) {
  const std::vector<AttentionPoint>& p = d.attention;
  if (p.empty()) return d.memory_efficiency;
  const auto at = [&](size_t i) { return backward ? p[i].backward : p[i].forward; };
  const double x = static_cast<double>(s);
  if (x <= p.front().seq) return at(0);
  for (size_t i = 1; i < p.size(); ++i) {
    if (x <= p[i].seq) {
      const double f = std::log(x / p[i - 1].seq) / std::log(p[i].seq / p[i - 1].seq);
      return at(i - 1) + f * (at(i) - at(i - 1));
    }
  }
  return at(p.size() - 1);
}

Kernel GemmKernel(const char* name, const DeviceModel& d, uint64_t m, uint64_t n, uint64_t k, uint64_t batch) {
  return Make(name, 2 * m * n * k * batch, (m * k + k * n + m * n) * kValue * batch, GemmEfficiency(d, m, n, k, batch),
              d.memory_efficiency);
}

// The two GEMMs of a backward apart: dX = dY·Wᵀ (M×K from M×N by N×K), then
// dW = Xᵀ·dY (K×N from K×M by M×N); together they are GemmBackwardKernel.
std::vector<Kernel> SplitBackward(const char* data, const char* weight, const DeviceModel& d, uint64_t m, uint64_t n,
                                  uint64_t k) {
  return {GemmKernel(data, d, m, k, n), GemmKernel(weight, d, k, n, m)};
}

// dX = dY·Wᵀ (M×K from M×N by N×K) and dW = Xᵀ·dY (K×N from K×M by M×N); the
// pair's efficiency is the one that gives the sum of their two times.
Kernel GemmBackwardKernel(const char* name, const DeviceModel& d, uint64_t m, uint64_t n, uint64_t k, uint64_t batch) {
  const double e_data = GemmEfficiency(d, m, k, n, batch), e_weight = GemmEfficiency(d, k, n, m, batch);
  const double e = 2 / (1 / e_data + 1 / e_weight);
  return Make(name, 4 * m * n * k * batch, 2 * (m * k + k * n + m * n) * kValue * batch, e, d.memory_efficiency);
}

Kernel ElementwiseKernel(const char* name, const DeviceModel& d, uint64_t read, uint64_t written, uint64_t flops) {
  return Make(name, std::max<uint64_t>(flops, 1), read + written, 1, d.memory_efficiency);
}

Kernel NormKernel(const char* name, const DeviceModel& d, bool apex, bool backward, uint64_t read, uint64_t written,
                  uint64_t flops) {
  const NormEfficiency& n = apex ? d.layernorm_apex : d.layernorm_persistent;
  const double e = backward ? n.backward : n.forward;
  return Make(name, std::max<uint64_t>(flops, 1), read + written, 1, e > 0 ? e : d.memory_efficiency);
}

namespace {

// The attention core's kernels at its measured bandwidth (forward or backward).
Kernel AttentionGemm(const char* name, const DeviceModel& d, const LayerShape& l, uint64_t m, uint64_t n, uint64_t k,
                     uint64_t batch, bool backward) {
  Kernel g = backward ? GemmBackwardKernel(name, d, m, n, k, batch) : GemmKernel(name, d, m, n, k, batch);
  g.memory_efficiency = static_cast<float>(AttentionEfficiency(d, l.s, backward));
  return g;
}

Kernel AttentionElementwise(const char* name, const DeviceModel& d, double efficiency, uint64_t read,
                            uint64_t written, uint64_t flops) {
  Kernel e = ElementwiseKernel(name, d, read, written, flops);
  e.memory_efficiency = static_cast<float>(efficiency);
  return e;
}

// A bias's gradient: the incoming gradient (`values` of them) summed over the
// tokens into `width` values (PyTorch's grad_output.sum(0)).
Kernel BiasGrad(const char* name, const DeviceModel& d, uint64_t values, uint64_t width) {
  return ElementwiseKernel(name, d, values * kValue, width * kValue, values);
}

// The residual's two gradients added into the block input's (autograd sums
// the one through the norm and the one through the residual add).
Kernel ResidualGrad(const DeviceModel& d, uint64_t elem) {
  return ElementwiseKernel("residual", d, 2 * elem * kValue, elem * kValue, elem);
}

}  // namespace

BlockKernels AttentionForward(const DeviceModel& d, const LayerShape& l) {
  const Tensors x = TensorsOf(l);
  const uint64_t heads = l.d ? l.q / l.d / l.t : 0;
  BlockKernels k;
  k.pre.push_back(NormKernel("ln", d, l.apex_norm, false, x.elem * kValue, x.elem * kValue, x.elem));
  k.body.push_back(GemmKernel("qkv", d, x.tokens, (l.q + 2 * l.kv) / l.t, l.h));
  if (l.rope) k.body.push_back(ElementwiseKernel("rope", d, x.rope * kValue, x.rope * kValue, x.rope));
  if (l.attention) {
    if (l.flash) {
      // Causal: the blocks above the diagonal are skipped, half the s² work.
      const uint64_t io = x.tokens * (2 * l.q + 2 * l.kv) / l.t * kValue;
      k.body.push_back(Make("flash", 2 * l.b * l.s * l.s * l.q / l.t, io, d.flash_efficiency, d.memory_efficiency));
    } else {
      const double core = AttentionEfficiency(d, l.s, false);
      const double dropout = d.attention_dropout_efficiency > 0 ? d.attention_dropout_efficiency : d.memory_efficiency;
      k.body.push_back(AttentionGemm("scores", d, l, l.s, l.s, l.d, l.b * heads, false));
      k.body.push_back(AttentionElementwise("softmax", d, core, x.probs * kValue, x.probs * kValue, x.probs));
      k.body.push_back(
          AttentionElementwise("dropout", d, dropout, x.probs * kValue, x.probs * (kValue + kMask), x.probs));
      k.body.push_back(AttentionGemm("av", d, l, l.s, l.d, l.s, l.b * heads, false));
    }
  }
  k.body.push_back(GemmKernel("proj", d, x.tokens, l.h, l.q / l.t));
  k.post.push_back(ElementwiseKernel("bda", d, 2 * x.elem * kValue, x.elem * (kValue + kMask), 2 * x.elem));
  return k;
}

BlockKernels MlpForward(const DeviceModel& d, const LayerShape& l) {
  const Tensors x = TensorsOf(l);
  BlockKernels k;
  k.pre.push_back(NormKernel("ln", d, l.apex_norm, false, x.elem * kValue, x.elem * kValue, x.elem));
  k.body.push_back(GemmKernel("fc1", d, x.tokens, l.f * (l.gated ? 2 : 1) / l.t, l.h));
  k.body.push_back(ElementwiseKernel("act", d, x.ffn_in * kValue, x.ffn_out * kValue, x.ffn_in));
  k.body.push_back(GemmKernel("fc2", d, x.tokens, l.h, l.f / l.t));
  k.post.push_back(ElementwiseKernel("bda", d, 2 * x.elem * kValue, x.elem * (kValue + kMask), 2 * x.elem));
  return k;
}

BlockKernels AttentionBackward(const DeviceModel& d, const LayerShape& l) {
  const Tensors x = TensorsOf(l);
  const uint64_t heads = l.d ? l.q / l.d / l.t : 0;
  BlockKernels k;
  // bias+dropout+add: the incoming gradient and the mask in, the block's gradient out.
  k.pre.push_back(ElementwiseKernel("bda", d, x.elem * (kValue + kMask), x.elem * kValue, x.elem));
  if (l.biases) k.pre.push_back(BiasGrad("bias_grad", d, x.elem, l.h));
  k.body.push_back(GemmBackwardKernel("proj", d, x.tokens, l.h, l.q / l.t));
  if (l.attention) {
    if (l.flash) {
      // The backward recomputes the scores: five GEMM-sized products to the forward's two.
      const uint64_t io = x.tokens * (2 * l.q + 2 * l.kv) / l.t * kValue;
      k.body.push_back(
          Make("flash", 5 * l.b * l.s * l.s * l.q / l.t, 2 * io, d.flash_backward_efficiency, d.memory_efficiency));
    } else {
      const double core = AttentionEfficiency(d, l.s, true);
      k.body.push_back(AttentionGemm("av", d, l, l.s, l.d, l.s, l.b * heads, true));
      k.body.push_back(ElementwiseKernel("dropout", d, x.probs * (kValue + kMask), x.probs * kValue, x.probs));
      k.body.push_back(
          AttentionElementwise("softmax", d, core, 2 * x.probs * kValue, x.probs * kValue, 2 * x.probs));
      k.body.push_back(AttentionGemm("scores", d, l, l.s, l.s, l.d, l.b * heads, true));
    }
  }
  if (l.rope) k.body.push_back(ElementwiseKernel("rope", d, x.rope * kValue, x.rope * kValue, x.rope));
  const uint64_t qkv = (l.q + 2 * l.kv) / l.t;  // QKV's output width on the rank
  k.body.push_back(GemmBackwardKernel("qkv", d, x.tokens, qkv, l.h));
  k.last_split = SplitBackward("qkv_dgrad", "qkv_wgrad", d, x.tokens, qkv, l.h);
  if (l.biases) k.post.push_back(BiasGrad("qkv_bias_grad", d, x.tokens * qkv, qkv));
  // The norm: its input and the gradient in, the input's gradient out.
  k.post.push_back(NormKernel("ln", d, l.apex_norm, true, 2 * x.elem * kValue, x.elem * kValue, 2 * x.elem));
  k.post.push_back(ResidualGrad(d, x.elem));
  return k;
}

BlockKernels MlpBackward(const DeviceModel& d, const LayerShape& l) {
  const Tensors x = TensorsOf(l);
  BlockKernels k;
  k.pre.push_back(ElementwiseKernel("bda", d, x.elem * (kValue + kMask), x.elem * kValue, x.elem));
  if (l.biases) k.pre.push_back(BiasGrad("bias_grad", d, x.elem, l.h));
  k.body.push_back(GemmBackwardKernel("fc2", d, x.tokens, l.h, l.f / l.t));
  k.body.push_back(ElementwiseKernel("act", d, (x.ffn_out + x.ffn_in) * kValue, x.ffn_in * kValue, 2 * x.ffn_in));
  const uint64_t up = l.f * (l.gated ? 2 : 1) / l.t;  // FC1's output width on the rank
  k.body.push_back(GemmBackwardKernel("fc1", d, x.tokens, up, l.h));
  k.last_split = SplitBackward("fc1_dgrad", "fc1_wgrad", d, x.tokens, up, l.h);
  if (l.biases) k.post.push_back(BiasGrad("fc1_bias_grad", d, x.ffn_in, up));
  k.post.push_back(NormKernel("ln", d, l.apex_norm, true, 2 * x.elem * kValue, x.elem * kValue, 2 * x.elem));
  k.post.push_back(ResidualGrad(d, x.elem));
  return k;
}

std::vector<Kernel> AttentionCoreRecompute(const DeviceModel& d, const LayerShape& l) {
  if (!l.attention || l.flash) return {};
  LayerShape core = l;
  std::vector<Kernel> body = AttentionForward(d, core).body;
  // Only the core: drop the projections and the rotary around it.
  std::vector<Kernel> out;
  for (const Kernel& k : body) {
    const std::string_view n = k.name;
    if (n == "scores" || n == "softmax" || n == "dropout" || n == "av") out.push_back(k);
  }
  return out;
}

}  // namespace orrery::gen
