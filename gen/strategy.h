// A parallelism strategy and the per-rank graphs it gives for a dense decoder
// transformer: DP, Megatron TP (+SP), PP with GPipe / 1F1B, bucketed gradient
// reduction over DP, ZeRO-1/2/3, activation recomputation. See docs/generator.md.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"
#include "gen/builder.h"
#include "gen/device.h"
#include "gen/formulas.h"
#include "gen/model.h"

namespace orrery::gen {

enum class Schedule { kGpipe, k1F1B, kInterleaved };

struct Strategy {
  int64_t tp = 1, cp = 1, ep = 1, dp = 1, pp = 1;
  int64_t npus = 0;             // 0: the product of the axes
  int64_t microbatches = 1;     // m, per DP replica per iteration
  int64_t microbatch_size = 1;  // b
  int64_t global_batch = 0;     // 0: b·m·dp·ep; else must equal it (or give m)
  Schedule schedule = Schedule::k1F1B;
  int64_t chunks = 1;  // model chunks per rank (interleaved 1F1B)
  bool sp = false;
  Recompute recompute = Recompute::kNone;
  int zero = 0;
  std::array<Axis, kNumAxes> order{Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};
  uint64_t bucket_bytes = 25 * kBytesPerMiB;  // gradient bucket (PyTorch DDP's default 25 MiB)
  uint64_t bytes_per_value = 2;               // bf16 activations, weights and gradients
  bool lm_head = true;                        // output layer + loss on the last stage
  // --offload: to the run's remote memory (pool), as MEM nodes the memory
  // layer simulates. Activations: stored after each layer's forward, loaded
  // back one layer ahead of its backward. Optimizer: the rank's optimizer
  // states (12 bytes per parameter, ZeRO-sharded) loaded and stored back once
  // per iteration after the gradients are reduced.
  bool offload_activations = false;
  bool offload_optimizer = false;
  // The kernel model (gen/kernels.h), on with --device: every kernel class of a
  // layer with its bytes and the device's efficiencies, and the work outside
  // the layers (embedding, logits and loss, gradient norm, optimizer step).
  // Off: the bare roofline of the GEMMs and the attention core only.
  bool kernel_model = false;
  DeviceModel device;
  bool flash_attention = false;  // --flash-attention (kernel model): one fused attention kernel
  // --tp-overlap (kernel model): the backward of a column-parallel GEMM (QKV,
  // FC1) reduces its input gradient over TP beside its weight-gradient GEMM
  // (Megatron's asynchronous TP all-reduce, 2021-09 on; with SP the input's
  // all-gather runs beside the data-gradient GEMM and the reduce-scatter beside
  // the weight-gradient one). No effect at TP 1.
  bool tp_overlap = false;
  // --layernorm (kernel model): the norm kernel the framework calls, apex's
  // fused LayerNorm (Megatron until 2021-10) or the persistent one (after).
  bool apex_layernorm = false;
  // --grad-reduce: the DP gradient buckets during the last backward
  // (overlapped, Megatron's DDP) or all after it (after-flush, local DDP).
  bool grad_reduce_after_flush = false;
  // --grad-accumulation (kernel model): the weight-gradient GEMMs accumulate
  // straight into the fp32 gradient buffer (fused, Megatron's
  // gradient-accumulation fusion), or write a bf16/fp16 gradient that a
  // separate kernel adds to the buffer after every microbatch's backward of
  // a layer (unfused, Megatron before the fusion: main_grad.add_(grad)).
  bool grad_accumulation_fused = true;
  // --precision (kernel model): bf16 (Megatron then keeps, accumulates and
  // reduces gradients in fp32) or fp16 (16-bit gradient buffer, loss scaling:
  // the step first copies the gradients to fp32 and unscales them).
  bool fp16 = false;
};

// Samples per iteration at most: --global-batch's range, and the bound of
// microbatch-size·microbatches·dp·ep.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;

// The strategy's NPUs, tp·cp·ep·dp·pp, or an error naming the flags, their
// values and the product when it passes kMaxNpus (checked before it is formed).
Result<int64_t> StrategyNpus(const Strategy& s);
// Samples per iteration, microbatch-size·microbatches·dp·ep, or an error past kMaxGlobalBatch.
Result<int64_t> StrategyGlobalBatch(const Strategy& s);

// The generated workload's nodes (all its classes together) at most, and the
// memory a node takes while generated (GenNode, its name and dependencies):
// the cap keeps a workload within about 8 GiB. GPT-3 on 16,384 NPUs with 64
// microbatches makes 254,000 nodes; 1 T on 3,072 NPUs with 512, 3.7 M.
inline constexpr uint64_t kMaxGenNodes = uint64_t{1} << 25;
inline constexpr uint64_t kGenBytesPerNode = 256;
// An upper estimate of the nodes GenerateDense makes for `s`, from the
// numbers alone (nothing is built): microbatches x layers x the most nodes a
// layer's forward and backward take, plus each microbatch's and stage's own.
uint64_t EstimateGenNodes(const ModelDesc& m, const Strategy& s);

// Checks the strategy against the model; one message naming the rule and
// numbers. Also the sizes: the products a node's operations and bytes come
// from, and the workload's estimated nodes (EstimateGenNodes, kMaxGenNodes).
Status ValidateStrategy(const ModelDesc& m, const Strategy& s);

// Layers held by stage k: l/p, the first l mod p stages one more.
int64_t StageLayers(const ModelDesc& m, int64_t pp, int64_t stage);
int64_t StageFirstLayer(const ModelDesc& m, int64_t pp, int64_t stage);

// Parameters held by one rank of `stage` (TP-sharded layers plus the embedding
// on the first stage and the output layer on the last; routed experts also
// EP-sharded): dense ones (gradients reduced over cp·ep·dp) and experts'
// (over cp·dp).
struct RankParamSplit {
  uint64_t dense = 0, expert = 0;
};
RankParamSplit RankParamsSplit(const ModelDesc& m, const Strategy& s, int64_t stage);
uint64_t RankParams(const ModelDesc& m, const Strategy& s, int64_t stage);

// A cooperative stop for a long generation (the search's --time-limit):
// GenerateDense looks at it before each stage's graph and before each
// microbatch's forward or backward pass of a stage (never per node); once it
// returns true, GenerateDense ends with an error naming where it stopped.
using GenStop = std::function<bool()>;

// The workload: one class per pipeline stage (class id = stage).
Result<Workload> GenerateDense(const ModelDesc& m, const Strategy& s, const GenStop& stop = nullptr);

}  // namespace orrery::gen
