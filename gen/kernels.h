// The kernels of a transformer layer as a GPU runs them, each with its FLOPs,
// the bytes it moves through HBM and the fractions of the device's peak FLOP/s
// and bandwidth it reaches (the roofline then times it: max(FLOPs / (peak ·
// compute_efficiency), bytes / (bandwidth · memory_efficiency))).
//
//   forward, one layer, one microbatch, per TP rank (E: tokens of an
//   element-wise kernel = T/t with SP, T without; T = b·s/cp tokens)
//
//     ln1 ─[SP all-gather]─ qkv ─ rope ─ scores ─ softmax ─ dropout ─ av ─ proj ─[TP reduce]─ bda1
//         ─ ln2 ─[SP all-gather]─ fc1 ─ act ─ fc2 ─[TP reduce]─ bda2
//     (FlashAttention: scores … av are one fused kernel, `flash`)
//
// GEMMs: 2·M·N·K FLOPs, bytes (M·K + K·N + M·N)·2, compute efficiency from
// GemmEfficiency (tile and wave quantisation); backward is the data-gradient
// and the weight-gradient GEMM (twice the FLOPs and bytes). Element-wise
// kernels (norms, rotary, softmax, dropout, bias+activation, bias+dropout+add)
// read and write their tensors once (2-byte values, 1-byte dropout masks).
// Sources and numbers: docs/generator.md, "Compute model".
#pragma once
#include <cstdint>
#include <vector>

#include "gen/device.h"

namespace orrery::gen {

struct Kernel {
  const char* name;  // the node's name suffix ("qkv", "softmax", ...)
  uint64_t flops = 0;
  uint64_t bytes = 0;
  float compute_efficiency = 1, memory_efficiency = 1;
};

// The fraction of the device's peak a GEMM of M×N×K (times `batch`
// independent ones) reaches: the large-GEMM efficiency times the useful share
// of the work its tiles and waves occupy times K / (K + gemm_k_overhead).
// One output tile of tile_m × tile_n per SM at a time;
// ceil(M/tile_m)·ceil(N/tile_n)·batch tiles run in ceil(tiles / SMs) waves,
// each wave as long as a full one (NVIDIA, "Matrix Multiplication Background
// User's Guide": tile and wave quantisation). Both orientations of the tile are
// tried; the better one is taken (as cuBLAS's heuristics choose). The depth
// term holds K at kGemmMinDepth or more: the measurements it comes from
// (docs/generator.md, "GEMM efficiency") start there, and the attention
// core's batched GEMMs below it (K = head size) are bandwidth-bound.
inline constexpr uint64_t kGemmMinDepth = 512;
double GemmEfficiency(const DeviceModel& d, uint64_t m, uint64_t n, uint64_t k, uint64_t batch = 1);

// The fraction of HBM bandwidth the unfused attention core (scores, softmax,
// context) reaches at sequence length `s`: the device's measured points,
// interpolated linearly in log s between two of them, the nearest one outside
// them; memory_efficiency when the device has none.
double AttentionEfficiency(const DeviceModel& d, uint64_t s, bool backward);

// A GEMM's kernel (forward) and the backward pair (data and weight gradients).
Kernel GemmKernel(const char* name, const DeviceModel& d, uint64_t m, uint64_t n, uint64_t k, uint64_t batch = 1);
Kernel GemmBackwardKernel(const char* name, const DeviceModel& d, uint64_t m, uint64_t n, uint64_t k,
                          uint64_t batch = 1);
// The backward's two GEMMs apart, named `data` and `weight`: the data gradient
// (M×K, depth N) then the weight gradient (K×N, depth M); their FLOPs and
// bytes add up to GemmBackwardKernel's.
std::vector<Kernel> SplitBackward(const char* data, const char* weight, const DeviceModel& d, uint64_t m, uint64_t n,
                                  uint64_t k);
// A memory-bound kernel that reads `read` and writes `written` bytes, with
// `flops` (one or a few per element; they never bound it).
Kernel ElementwiseKernel(const char* name, const DeviceModel& d, uint64_t read, uint64_t written, uint64_t flops);
// The layer norm (or RMSNorm) forward or backward: element-wise, at the
// measured bandwidth of the implementation called (`apex`: apex's fused
// LayerNorm, else the persistent kernel), or memory_efficiency when the
// device has none.
Kernel NormKernel(const char* name, const DeviceModel& d, bool apex, bool backward, uint64_t read, uint64_t written,
                  uint64_t flops);

// One transformer layer's shape on one rank.
struct LayerShape {
  uint64_t b = 1;         // samples in the microbatch
  uint64_t s = 0;         // the rank's tokens per sample (s / cp)
  uint64_t h = 0;         // hidden
  uint64_t q = 0;         // a·d (query width)
  uint64_t kv = 0;        // kv_heads·d
  uint64_t d = 0;         // head dim
  uint64_t f = 0;         // FFN inner size
  bool gated = false;     // SwiGLU (3 FFN matrices)
  bool rope = false;      // rotary embeddings on Q and K
  uint64_t t = 1;         // tensor-parallel degree
  bool sp = false;        // sequence parallelism: element-wise work on T/t tokens
  bool flash = false;     // FlashAttention: one fused attention kernel, no s² tensors
  bool apex_norm = false;  // --layernorm=apex: apex's fused LayerNorm kernel (NormKernel)
  bool attention = true;  // false: the attention core is built elsewhere (ring attention with CP)
  bool biases = true;     // GEMM biases: their gradients are sums over the tokens in the backward
};

// The kernels of each block, in order. Attention: {pre: ln1} {body: qkv …
// proj} {post: bda1}; MLP: {pre: ln2} {body: fc1 act fc2} {post: bda2}.
// The TP collectives go between pre and body and between body and post.
struct BlockKernels {
  std::vector<Kernel> pre, body, post;
  // Backward: the body's last GEMM (QKV, FC1) as its data-gradient and its
  // weight-gradient GEMM, the two halves of body.back() (--tp-overlap runs the
  // TP collective of the first beside the second).
  std::vector<Kernel> last_split;
};
BlockKernels AttentionForward(const DeviceModel& d, const LayerShape& l);
BlockKernels MlpForward(const DeviceModel& d, const LayerShape& l);
// Backward, in the order they run (post's backward first): pre = bda's
// backward, body = the GEMMs' and element-wise kernels' backward in reverse,
// post = the norm's backward.
BlockKernels AttentionBackward(const DeviceModel& d, const LayerShape& l);
BlockKernels MlpBackward(const DeviceModel& d, const LayerShape& l);
// Selective recomputation (Korthikanti et al. 2022 §4.2.2): the forward of the
// attention core (scores, softmax, dropout, av) again before its backward.
// Empty with FlashAttention (its backward recomputes the core itself, counted there).
std::vector<Kernel> AttentionCoreRecompute(const DeviceModel& d, const LayerShape& l);

}  // namespace orrery::gen
