// The closed forms the generator is checked against (sources in docs/generator.md).
#pragma once
#include <cstdint>
#include <string>

#include "gen/model.h"

namespace orrery::gen {

enum class Recompute { kNone, kSelective, kFull };

// FLOP totals: 128-bit (GPT-3 on 16K NPUs is already 1.8e19, next to 2^64).
using Flops = unsigned __int128;
std::string FlopsText(Flops f);

// FLOPs of one training iteration of a GPT model on B samples (Narayanan et al.
// 2021 eq. 3 / Korthikanti et al. 2022 Appendix A; per layer and sample the
// forward pass is 24sh² GEMM + 4s²h attention-core FLOPs, backward twice that):
//   none:      72·B·s·l·h²·(1 + s/(6h) + V/(12lh))  = 72Bslh² + 12Bs²lh + 6BshV
//   selective: adds one forward of the attention core (4Bs²lh):
//              72·B·s·l·h²·(1 + 2s/(9h) + V/(12lh)) = 72Bslh² + 16Bs²lh + 6BshV
//   full:      adds one forward of every layer (not the logits):
//              96·B·s·l·h²·(1 + s/(6h) + V/(16lh))  = 96Bslh² + 16Bs²lh + 6BshV
// (integer forms; exact for GPT shapes: ffn 4h, MHA, ungated, dense).
Flops KorthikantiFlops(const ModelDesc& m, uint64_t global_batch, Recompute r);

// FLOPs of one training iteration on B samples for any model the generator
// takes (GQA, SwiGLU, MoE top-k), summed over its GEMMs and attention core,
// forward pass per sample and layer:
//   attention: 2s·h·(a·d + 2·kv·d) + 2s·(a·d)·h GEMMs + 4s²·(a·d) core
//   dense FFN: 2s·h·f·(2, or 3 gated)
//   MoE FFN:   2s·h·E router + 2s·h·f_e·(2|3)·(top_k + shared experts)
//   logits (once): 2s·h·V when `lm_head`
// backward = 2× forward; selective recomputation adds the forward attention
// core once more, full recomputation the forward of every layer (not the
// logits). For GPT shapes this equals KorthikantiFlops.
Flops ModelFlops(const ModelDesc& m, uint64_t global_batch, Recompute r, bool lm_head = true);

// Activation bytes of one transformer layer for one microbatch of b samples,
// Korthikanti et al. 2022 Table 2 (16-bit activations, a = heads):
//   no TP (t = 1), none:   sbh·(34 + 5as/h)
//   TP, none:              sbh·(10 + 24/t + 5as/(ht))
//   TP+SP, none:           sbh·(34/t + 5as/(ht))
//   TP, selective:         sbh·(10 + 24/t)
//   TP+SP, selective:      sbh·34/t
//   full recompute:        sbh·2 (the layer input only)
// Integer arithmetic; t must divide s·b·h and a (checked by the strategy).
uint64_t ActivationBytesPerLayer(const ModelDesc& m, uint64_t b, uint64_t t, bool sp, Recompute r);
// The same from the numbers: s tokens per sample (seq_len/cp with context
// parallelism), hidden h, heads a. No allocation (the strategy search's pre-filter).
uint64_t ActivationBytesPerLayer(uint64_t s, uint64_t h, uint64_t a, uint64_t b, uint64_t t, bool sp, Recompute r);

// Model-state bytes per rank for Ψ parameters held by the rank (after TP/PP
// splits), mixed-precision Adam (K = 12), ZeRO stage over d data-parallel ranks
// (Rajbhandari et al. 2020, Fig. 1): 16Ψ, 4Ψ+12Ψ/d, 2Ψ+14Ψ/d, 16Ψ/d.
// Rounded up to whole bytes.
uint64_t ModelStateBytes(uint64_t psi, int zero_stage, uint64_t d);
// Of those, the optimizer states (fp32 master weights, momentum, variance:
// 12Ψ, sharded over d from ZeRO-1 on): what --offload=optimizer moves out.
uint64_t OptimizerBytes(uint64_t psi, int zero_stage, uint64_t d);

// Pipeline bubble fraction of GPipe and 1F1B: (p−1)/(m+p−1) (Narayanan et al. 2021 §2.2).
double BubbleFraction(int64_t p, int64_t m);

}  // namespace orrery::gen
