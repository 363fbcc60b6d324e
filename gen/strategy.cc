#include "gen/strategy.h"

#include "gen/kernels.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <span>

#include "core/limits.h"

namespace orrery::gen {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

// Generates one pipeline stage's graph (the class every rank of the stage runs).
class StageGen {
 public:
  StageGen(const ModelDesc& m, const Strategy& s, int64_t stage, const Layout& layout, const GenStop& stop)
      : m_(m), s_(s), stage_(stage), layout_(layout), stop_(stop) {
    const uint64_t b = s.microbatch_size, sq = m.seq_len / s.cp, h = m.hidden, t = s.tp, bpv = s.bytes_per_value;
    const uint64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
    const uint64_t f = m.ffn, mats = m.gated_ffn ? 3 : 2;
    tokens_ = b * sq;  // the rank's tokens of a microbatch (its sequence shard with CP)
    act_bytes_ = tokens_ * h * bpv;
    qkv_ops_ = 2 * tokens_ * h * (q + 2 * kv) / t;
    proj_ops_ = 2 * tokens_ * q * h / t;
    core_step_ = 4 * b * sq * sq * q / t;  // scores and attention over V for one K/V block
    attn_core_ = core_step_ * s.cp;
    attn_fwd_ = (2 * tokens_ * h * (q + 2 * kv) + 2 * tokens_ * q * h) / t + attn_core_;
    kv_bytes_ = 2 * tokens_ * kv / t * bpv;
    mlp_fwd_ = 2 * tokens_ * h * f * mats / t;
    logit_fwd_ = 2 * tokens_ * h * m.vocab / t;
    attn_w_bytes_ = (h * (q + 2 * kv) + q * h) / t * bpv;
    qkv_w_bytes_ = h * (q + 2 * kv) / t * bpv;
    proj_w_bytes_ = q * h / t * bpv;
    mlp_w_bytes_ = mats * h * f / t * bpv;
    logit_bytes_ = (m.vocab * h / t + tokens_ * h + tokens_ * m.vocab / t) * bpv;
    if (m.experts > 0) {
      const uint64_t fe = m.expert_ffn, k = m.top_k, e = m.experts;
      moe_router_ = 2 * tokens_ * h * e / t + 2 * tokens_ * h * fe * mats * m.shared_experts / t;
      moe_experts_ = 2 * tokens_ * k * h * fe * mats / t;
      moe_a2a_ = tokens_ * k * h * bpv;
      moe_router_bytes_ = (h * e + m.shared_experts * mats * h * fe) / t * bpv + 2 * act_bytes_;
      moe_expert_bytes_ = (e / s.ep) * mats * h * fe / t * bpv + 2 * moe_a2a_;
    }
    dense_dp_ = layout_.GroupSize(kDenseDp);
    expert_dp_ = layout_.GroupSize(kExpertDp);
    ModelDesc local = m;
    local.seq_len = m.seq_len / s.cp;
    act_saved_ = ActivationBytesPerLayer(local, b, t, s.sp, s.recompute);
    const RankParamSplit split = RankParamsSplit(m, s, stage);
    optimizer_bytes_ = OptimizerBytes(split.dense, s.zero, dense_dp_) +
                       OptimizerBytes(split.expert, s.zero, expert_dp_);
    local_params_ = split.dense + split.expert;
    // The parameters this rank's optimizer step updates (its ZeRO shard from stage 1 on).
    update_params_ = s.zero >= 1 ? split.dense / static_cast<uint64_t>(dense_dp_) +
                                       split.expert / static_cast<uint64_t>(expert_dp_)
                                 : split.dense + split.expert;
    // Megatron's pipeline messages (kernel model): each TP rank sends its 1/t
    // of the activation (scatter-gather; with SP it is already sharded).
    p2p_bytes_ = s.kernel_model && t > 1 ? act_bytes_ / t : act_bytes_;
    if (s.kernel_model) InitKernels(b, sq, h, q, kv, f);
    SetChunk(0);
  }

  // The kernel model's kernels of one dense layer (the same for every layer of the stage).
  void InitKernels(uint64_t b, uint64_t sq, uint64_t h, uint64_t q, uint64_t kv, uint64_t f) {
    const Strategy& s = s_;
    const ModelDesc& m = m_;
    const uint64_t t = s.tp;
    LayerShape l;
    l.b = b;
    l.s = sq;
    l.h = h;
    l.q = q;
    l.kv = kv;
    l.d = m.head_dim;
    l.f = f;
    l.gated = m.gated_ffn;
    l.rope = !m.learned_positions;
    l.t = t;
    l.sp = s.sp;
    l.flash = s.flash_attention;
    l.biases = m.biases;
    l.apex_norm = s.apex_layernorm;
    l.attention = s.cp == 1;
    attn_f_ = AttentionForward(s.device, l);
    attn_b_ = AttentionBackward(s.device, l);
    mlp_f_ = MlpForward(s.device, l);
    mlp_b_ = MlpBackward(s.device, l);
    core_recompute_ = AttentionCoreRecompute(s.device, l);
    elem_tokens_ = s.sp ? tokens_ / t : tokens_;
  }

  GraphBuilder Run() {
    // Kernel model: the iteration starts by zeroing the fp32 gradient buffer
    // of every parameter the rank holds (Megatron's zero_grad_buffer).
    if (s_.kernel_model) Elementwise("optimizer.zero_grad", 0, GradWidth() * local_params_);
    // The schedule: (forward?, microbatch) in the order this stage runs them.
    std::vector<std::pair<bool, int64_t>> ops;
    const int64_t mbs = s_.microbatches;
    if (s_.schedule == Schedule::kGpipe) {
      for (int64_t i = 0; i < mbs; ++i) ops.push_back({true, i});
      for (int64_t i = 0; i < mbs; ++i) ops.push_back({false, i});
    } else if (s_.schedule == Schedule::kInterleaved) {
      return RunInterleaved();
    } else {
      const int64_t warm = std::min(s_.pp - stage_ - 1, mbs);
      for (int64_t i = 0; i < warm; ++i) ops.push_back({true, i});
      for (int64_t i = 0; i < mbs - warm; ++i) {
        ops.push_back({true, warm + i});
        ops.push_back({false, i});
      }
      for (int64_t i = mbs - warm; i < mbs; ++i) ops.push_back({false, i});
    }
    for (const auto& [fwd, mb] : ops) {
      if (Halted(fwd, mb)) break;
      fwd ? Forward(mb) : Backward(mb, mb == mbs - 1);
    }
    return std::move(g_);
  }

  // Where the stop ended the stage's graph ("" when it did not).
  const std::string& halted() const { return halted_; }

 private:
  // Megatron's interleaved 1F1B (Narayanan et al. 2021 §2.2.2): v chunks per
  // rank, virtual stage j = chunk·p + stage; step k of m·v runs chunk
  // (k mod pv) div p (backward: v−1 minus that) of microbatch (k div pv)·p + k mod p.
  GraphBuilder RunInterleaved() {
    const int64_t p = s_.pp, v = s_.chunks, total = s_.microbatches * v;
    const int64_t warm = std::min((p - stage_ - 1) * 2 + (v - 1) * p, total);
    auto mb_of = [&](int64_t k) { return k / (p * v) * p + k % p; };
    auto fwd = [&](int64_t k) {
      if (Halted(true, mb_of(k))) return;
      SetChunk(k % (p * v) / p);
      Forward(mb_of(k));
    };
    auto bwd = [&](int64_t k) {
      if (Halted(false, mb_of(k))) return;
      SetChunk(v - 1 - k % (p * v) / p);
      Backward(mb_of(k), mb_of(k) == s_.microbatches - 1);
    };
    for (int64_t k = 0; k < warm; ++k) fwd(k);
    for (int64_t i = 0; i < total - warm; ++i) {
      // A steady step is one forward, one backward, then one batched exchange
      // (Megatron's send_forward_backward_recv_forward_backward): the
      // forward's output leaves with the backward's gradient.
      defer_send_ = s_.kernel_model;
      fwd(warm + i);
      defer_send_ = false;
      bwd(i);
      FlushDeferredSend();
    }
    for (int64_t k = total - warm; k < total; ++k) bwd(k);
    return std::move(g_);
  }
  // The stop, looked at before each microbatch's pass; true once it fired
  // (then every later pass is skipped without looking again).
  bool Halted(bool forward, int64_t mb) {
    if (!halted_.empty()) return true;
    if (!stop_ || !stop_()) return false;
    halted_ = "stage " + N(stage_) + " of " + N(s_.pp) + ", before microbatch " + N(mb) + "'s " +
              (forward ? "forward" : "backward");
    return true;
  }
  void SetChunk(int64_t chunk) {
    vstage_ = chunk * s_.pp + stage_;
    first_ = vstage_ == 0;
    last_ = vstage_ == s_.pp * s_.chunks - 1;
  }
  int64_t Vstages() const { return s_.pp * s_.chunks; }
  // Peer offsets along pp to the next / previous virtual stage (wrapping from
  // the last rank to the first for the next chunk).
  int NextOffset() const { return stage_ < s_.pp - 1 ? 1 : -static_cast<int>(s_.pp - 1); }
  int PrevOffset() const { return stage_ > 0 ? -1 : static_cast<int>(s_.pp - 1); }
  // Message tags: forward into virtual stage j: 2·(mb·V + j); backward out of j: 2·(mb·V + j) + 1.
  uint64_t FwdTag(int64_t mb, int64_t into) const { return 2 * static_cast<uint64_t>(mb * Vstages() + into); }
  uint64_t BwdTag(int64_t mb, int64_t from) const { return FwdTag(mb, from) + 1; }
  std::vector<NodeRef> Chain() const { return has_last_ ? std::vector<NodeRef>{last_node_} : std::vector<NodeRef>{}; }
  NodeRef Step(NodeRef r) {
    last_node_ = r;
    has_last_ = true;
    return r;
  }
  void StepWith(NodeRef extra) {  // the next chained node also waits for `extra`
    pending_.push_back(extra);
  }
  std::vector<NodeRef> Deps() {
    std::vector<NodeRef> d = Chain();
    d.insert(d.end(), pending_.begin(), pending_.end());
    pending_.clear();
    return d;
  }
  // A TP-split block: [AG] body [RS] with SP, body [AR] without; `body`
  // chains the block's own nodes. comm_size as ASTRA-sim reads it:
  // all-gather = the shard each rank contributes (output = shard·group size);
  // all-reduce and reduce-scatter = the whole buffer.
  // Backward with SP and the kernel model: the block's input is gathered
  // again for the weight gradients (Korthikanti et al. 2022 §4.2.2; Megatron
  // keeps only the shard).
  template <typename Body>
  void Block(const std::string& name, Body body, bool backward = false) {
    const bool tp = s_.tp > 1;
    if (tp && s_.sp) Step(SpGather(name + ".sp_ag", Deps()));
    if (tp && s_.sp && backward && s_.kernel_model) Step(SpGather(name + ".sp_input_ag", Deps()));
    body();
    if (tp) Step(TpReduce(name, Deps()));
  }
  // SP's all-gather of the sequence over TP (each rank contributes its 1/t).
  NodeRef SpGather(const std::string& name, std::vector<NodeRef> deps) {
    return g_.Collective(name, Coll::kAllGather, act_bytes_ / s_.tp, Axis::kTp, std::move(deps));
  }
  // A block's TP reduction: the all-reduce, or with SP the reduce-scatter.
  NodeRef TpReduce(const std::string& name, std::vector<NodeRef> deps) {
    return s_.sp ? g_.Collective(name + ".sp_rs", Coll::kReduceScatter, act_bytes_, Axis::kTp, std::move(deps))
                 : g_.Collective(name + ".tp_ar", Coll::kAllReduce, act_bytes_, Axis::kTp, std::move(deps));
  }
  void Block(const std::string& name, uint64_t ops, uint64_t bytes) {
    Block(name, [&] { Step(g_.Compute(name, ops, bytes, Deps())); });
  }
  // A block under the kernel model: its element-wise kernels before and after
  // the TP-split part (`body`, between the block's TP collectives).
  template <typename Body>
  void KernelBlock(const std::string& name, const BlockKernels& k, bool backward, Body body) {
    Kernels(name, k.pre);
    Block(name, body, backward);
    Kernels(name, k.post);
  }
  // --tp-overlap: Megatron's asynchronous TP communication in a column-parallel
  // GEMM's backward (kernel model, TP > 1, no ring attention).
  bool OverlapsTp() const { return s_.tp_overlap && s_.tp > 1 && s_.cp == 1; }
  // A block's backward under --tp-overlap: as KernelBlock's, but its last GEMM
  // runs as the data gradient, then the weight gradient beside the TP
  // reduction of the data gradient (all-reduce; SP: reduce-scatter, and the
  // input's all-gather the weight gradient needs beside the data gradient);
  // the block's next kernel waits for both.
  void OverlappedBackward(const std::string& name, const BlockKernels& k, const std::vector<Kernel>* recompute) {
    Kernels(name, k.pre);
    if (s_.sp) Step(SpGather(name + ".sp_ag", Deps()));
    if (recompute) Kernels(name + ".recompute", *recompute);
    Kernels(name, std::span<const Kernel>(k.body).first(k.body.size() - 1));
    const std::vector<NodeRef> before = Deps();
    const Kernel& dg = k.last_split[0];
    const Kernel& wg = k.last_split[1];
    std::vector<NodeRef> weight_deps;
    if (s_.sp) weight_deps.push_back(SpGather(name + ".sp_input_ag", before));
    const NodeRef data = KernelNode(name + "." + dg.name, dg, before);
    const NodeRef reduce = TpReduce(name, {data});
    weight_deps.push_back(data);
    Step(KernelNode(name + "." + wg.name, wg, std::move(weight_deps)));
    StepWith(reduce);
    Kernels(name, k.post);
  }
  // The kernel model's kernels, chained.
  void Kernels(const std::string& name, std::span<const Kernel> ks) {
    for (const Kernel& k : ks) {
      StepKernel(name + "." + k.name, k);
    }
  }
  // A GEMM-bound node outside the kernel tables (ring attention, MoE): at the
  // device's large-GEMM efficiency under the kernel model.
  NodeRef Comp(const std::string& name, uint64_t ops, uint64_t bytes, std::vector<NodeRef> deps) {
    if (!s_.kernel_model) return g_.Compute(name, ops, bytes, std::move(deps));
    return g_.Compute(name, ops, bytes, static_cast<float>(s_.device.gemm_efficiency),
                      static_cast<float>(s_.device.memory_efficiency), std::move(deps));
  }
  // A kernel of the model (gen/kernels.h) as the next compute node of the chain.
  void StepKernel(const std::string& name, const Kernel& k) { Step(KernelNode(name, k, Deps())); }
  NodeRef KernelNode(const std::string& name, const Kernel& k, std::vector<NodeRef> deps) {
    return g_.Compute(name, k.flops, k.bytes, k.compute_efficiency, k.memory_efficiency, std::move(deps));
  }
  // A memory-bound kernel of the work outside the layers.
  void Elementwise(const std::string& name, uint64_t read, uint64_t written) {
    StepKernel(name, ElementwiseKernel("", s_.device, read, written, (read + written) / 4));
  }
  // The final norm, at the bandwidth of the norm kernel the layers use.
  void Norm(const std::string& name, bool backward, uint64_t read, uint64_t written) {
    StepKernel(name, NormKernel("", s_.device, s_.apex_layernorm, backward, read, written, (read + written) / 4));
  }
  // Ring attention over the CP group (Liu et al. 2023; Megatron-Core's
  // context parallelism): each rank holds s/cp tokens; cp − 1 steps each pass
  // the K/V block in hand to the next rank and compute attention against the
  // block received from the previous one. Backward: K/V and their gradients
  // travel (twice the bytes), twice the core FLOPs, and selective
  // recomputation adds one forward core per step.
  void RingAttention(const std::string& name, bool backward) {
    const uint64_t mul = backward ? 2 : 1;
    const uint64_t step_ops = mul * core_step_ + (backward && s_.recompute == Recompute::kSelective ? core_step_ : 0);
    const uint64_t block_bytes = mul * 2 * kv_bytes_;
    NodeRef block;  // after it, the K/V block in hand can travel
    if (!backward) {
      block = Step(Comp(name + ".qkv", qkv_ops_ + step_ops, qkv_w_bytes_ + act_bytes_ + block_bytes, Deps()));
    } else {
      block = Step(Comp(name + ".proj", 2 * proj_ops_, 2 * (proj_w_bytes_ + 2 * act_bytes_), Deps()));
      Step(Comp(name + ".core0", step_ops, block_bytes, Deps()));
    }
    for (int64_t i = 1; i < s_.cp; ++i) {
      const uint64_t tag = kCpTagBase + cp_messages_++;
      g_.Send(name + ".kv_send" + N(i), Axis::kCp, +1, mul * kv_bytes_, tag, {block});
      block = g_.Recv(name + ".kv_recv" + N(i), Axis::kCp, -1, mul * kv_bytes_, tag, {});
      StepWith(block);
      Step(Comp(name + ".core" + N(i), step_ops, block_bytes, Deps()));
    }
    if (!backward) {
      Step(Comp(name + ".proj", proj_ops_, proj_w_bytes_ + 2 * act_bytes_, Deps()));
    } else {
      Step(Comp(name + ".qkv", 2 * qkv_ops_, 2 * (qkv_w_bytes_ + act_bytes_ + block_bytes / 2), Deps()));
    }
  }
  void Attention(const std::string& name, bool backward) {
    if (s_.kernel_model) {
      const BlockKernels& k = backward ? attn_b_ : attn_f_;
      const bool selective = backward && s_.recompute == Recompute::kSelective;
      if (backward && OverlapsTp()) return OverlappedBackward(name, k, selective ? &core_recompute_ : nullptr);
      return KernelBlock(name, k, backward, [&] {
        if (s_.cp > 1) return RingAttention(name, backward);
        if (selective) Kernels(name + ".recompute", core_recompute_);
        Kernels(name, k.body);
      });
    }
    const uint64_t mul = backward ? 2 : 1;
    const uint64_t extra = backward && s_.recompute == Recompute::kSelective ? attn_core_ : 0;
    if (s_.cp == 1) return Block(name, mul * attn_fwd_ + extra, mul * (attn_w_bytes_ + 2 * act_bytes_));
    Block(name, [&] { RingAttention(name, backward); });
  }
  // The FFN of layer j: dense, or MoE (Shazeer et al. 2017, Lepikhin et al.
  // 2020): router (+ shared experts) on the rank's tokens, a dispatch
  // all-to-all over EP of each token's top-k copies, the local experts, and
  // a combine all-to-all back; backward mirrors it with twice the FLOPs.
  void Ffn(const std::string& name, int64_t layer, bool backward) {
    const uint64_t mul = backward ? 2 : 1;
    if (s_.kernel_model) {
      const BlockKernels& k = backward ? mlp_b_ : mlp_f_;
      if (backward && OverlapsTp() && !IsMoeLayer(m_, layer)) return OverlappedBackward(name, k, nullptr);
      return KernelBlock(name, k, backward, [&] {
        if (IsMoeLayer(m_, layer)) return MoeBody(name, backward);
        Kernels(name, k.body);
      });
    }
    if (!IsMoeLayer(m_, layer)) return Block(name, mul * mlp_fwd_, mul * (mlp_w_bytes_ + 2 * act_bytes_));
    Block(name, [&] { MoeBody(name, backward); });
  }
  void MoeBody(const std::string& name, bool backward) {
    const uint64_t mul = backward ? 2 : 1;
    {
      const bool a2a = s_.ep > 1;
      if (!backward) Step(Comp(name + ".router", moe_router_, moe_router_bytes_, Deps()));
      if (a2a)
        Step(g_.Collective(name + (backward ? ".combine_grad" : ".dispatch"), Coll::kAllToAll, moe_a2a_, Axis::kEp,
                           Deps()));
      Step(Comp(name + ".experts", mul * moe_experts_, mul * moe_expert_bytes_, Deps()));
      if (a2a)
        Step(g_.Collective(name + (backward ? ".dispatch_grad" : ".combine"), Coll::kAllToAll, moe_a2a_, Axis::kEp,
                           Deps()));
      if (backward) Step(Comp(name + ".router", 2 * moe_router_, 2 * moe_router_bytes_, Deps()));
    }
  }
  // Gradient bytes of layer j on this rank: dense parameters (TP-sharded),
  // routed experts (TP- and EP-sharded).
  uint64_t DenseGradBytes(int64_t layer) const {
    return static_cast<uint64_t>(LayerParams(m_, layer) - ExpertParams(m_, layer)) / s_.tp * s_.bytes_per_value;
  }
  uint64_t ExpertGradBytes(int64_t layer) const {
    return static_cast<uint64_t>(ExpertParams(m_, layer)) / (s_.tp * s_.ep) * s_.bytes_per_value;
  }
  // ZeRO-3 / FSDP: a layer's parameters are all-gathered before each use.
  // The gather of the next layer is issued when a layer starts (one layer of
  // prefetch, PyTorch FSDP's default), so it overlaps that layer's compute;
  // the layer waits for its own gather.
  bool Zero3() const { return s_.zero == 3 && (dense_dp_ > 1 || expert_dp_ > 1); }
  std::vector<NodeRef> GatherParams(const std::string& name, int64_t layer, std::vector<NodeRef> deps) {
    std::vector<NodeRef> out;
    if (dense_dp_ > 1) {
      out.push_back(g_.Collective(name + ".zero3_ag", Coll::kAllGather, DenseGradBytes(layer) / dense_dp_,
                                  layout_.Effective(kDenseDp), deps));
    }
    if (expert_dp_ > 1 && ExpertGradBytes(layer) > 0) {
      out.push_back(g_.Collective(name + ".zero3_expert_ag", Coll::kAllGather, ExpertGradBytes(layer) / expert_dp_,
                                  layout_.Effective(kExpertDp), out.empty() ? deps : std::vector<NodeRef>{out.back()}));
    }
    return out;
  }
  // Before layer `layer` of a pass: its gathers (issued now when nothing
  // prefetched them), then the prefetch of `next` (-1: none).
  void BeforeLayer(const std::string& prefix, const std::string& next_prefix, int64_t layer, int64_t next) {
    if (!Zero3()) return;
    if (gathered_.empty()) gathered_ = GatherParams(prefix, layer, Chain());
    std::vector<NodeRef> mine = std::move(gathered_);
    gathered_.clear();
    if (next >= 0) {
      std::vector<NodeRef> deps = Chain();
      deps.insert(deps.end(), mine.begin(), mine.end());
      gathered_ = GatherParams(next_prefix, next, deps);
    }
    for (NodeRef g : mine) StepWith(g);
  }
  void ForwardLayers(const std::string& tag, int64_t mb) {
    const int64_t first = StageFirstLayer(m_, Vstages(), vstage_), n = StageLayers(m_, Vstages(), vstage_);
    for (int64_t j = first; j < first + n; ++j) {
      const std::string p = tag + ".mb" + N(mb) + ".layer" + N(j);
      BeforeLayer(p, tag + ".mb" + N(mb) + ".layer" + N(j + 1), j, j + 1 < first + n ? j + 1 : -1);
      Attention(p + ".attn", false);
      Ffn(p + ".mlp", j, false);
      // Offload: the layer's saved activations go to the pool once its forward
      // is done (nothing waits for the store but the later load).
      if (s_.offload_activations && tag == "fwd") stored_[{mb, j}] = g_.MemStore(p + ".act_store", act_saved_, Chain());
    }
  }
  // Offload: the load of layer j's activations, issued when the backward
  // reaches the layer above it (one layer of prefetch); the layer's backward
  // waits for it.
  void LoadActivations(int64_t mb, int64_t layer) {
    auto it = stored_.find({mb, layer});
    if (it == stored_.end()) return;
    std::vector<NodeRef> deps = Chain();
    deps.push_back(it->second);
    loads_[{mb, layer}] = g_.MemLoad("bwd.mb" + N(mb) + ".layer" + N(layer) + ".act_load", act_saved_, deps);
  }
  // A pipeline message in: the receive, then (kernel model, TP without SP)
  // the all-gather of the scattered shards over NVLink.
  NodeRef PipeRecv(const std::string& name, int offset, uint64_t tag) {
    NodeRef r = g_.Recv(name, Axis::kPp, offset, p2p_bytes_, tag, {});
    if (s_.kernel_model && s_.tp > 1 && !s_.sp) {
      r = g_.Collective(name + "_gather", Coll::kAllGather, p2p_bytes_, Axis::kTp, {r});
    }
    return r;
  }
  // Embedding (kernel model, first virtual stage): the vocab-parallel lookup
  // (each TP rank its rows, the partial sums reduced over TP; with SP
  // reduce-scattered), then dropout on the rank's tokens. Backward: the
  // dense gradient of the rank's table shard (PyTorch's embedding backward
  // writes all V/t rows), accumulated into the fp32 main gradient.
  void EmbeddingForward(const std::string& p) {
    const uint64_t th = tokens_ * m_.hidden * s_.bytes_per_value, eh = elem_tokens_ * m_.hidden * s_.bytes_per_value;
    Elementwise(p + ".embed", th * (m_.learned_positions ? 2 : 1), th);
    if (s_.tp > 1) {
      Step(s_.sp ? g_.Collective(p + ".embed_rs", Coll::kReduceScatter, act_bytes_, Axis::kTp, Deps())
                 : g_.Collective(p + ".embed_ar", Coll::kAllReduce, act_bytes_, Axis::kTp, Deps()));
    }
    Elementwise(p + ".embed_dropout", eh, eh + eh / s_.bytes_per_value);
  }
  void EmbeddingBackward(const std::string& p) {
    const uint64_t eh = elem_tokens_ * m_.hidden * s_.bytes_per_value;
    const uint64_t table = m_.vocab * m_.hidden / s_.tp;
    Elementwise(p + ".embed_dropout", eh + eh / s_.bytes_per_value, eh);
    if (s_.tp > 1 && s_.sp) {
      Step(SpGather(p + ".embed_ag", Deps()));
    }
    // grad in (T·h), dense rows out (2 B), main_grad += grad (read 4 + 2, write 4).
    Elementwise(p + ".embed_grad", tokens_ * m_.hidden * s_.bytes_per_value + 6 * table, 6 * table);
  }
  // Output layer and loss (kernel model, last virtual stage): the final norm,
  // (SP) the gather of the sequence, the logits GEMM, Megatron's
  // vocab-parallel cross-entropy in fp32 (logits to fp32, max, exp, sum,
  // divide: 18 bytes read and 12 written per logit) with its three
  // all-reduces over TP (max, sum of exponentials, the target's logit: one
  // fp32 per token each).
  void LogitsForward(const std::string& p) {
    const uint64_t eh = elem_tokens_ * m_.hidden * s_.bytes_per_value, logits = tokens_ * m_.vocab / s_.tp;
    Norm(p + ".final_ln", false, eh, eh);
    if (s_.tp > 1 && s_.sp) {
      Step(SpGather(p + ".logits_ag", Deps()));
    }
    const Kernel k = GemmKernel("logits", s_.device, tokens_, m_.vocab / s_.tp, m_.hidden);
    StepKernel(p + ".logits", k);
    Elementwise(p + ".cross_entropy", 18 * logits, 12 * logits);
    if (s_.tp > 1) {
      for (const char* what : {".ce_max_ar", ".ce_sum_ar", ".ce_target_ar"}) {
        Step(g_.Collective(p + what, Coll::kAllReduce, tokens_ * 4, Axis::kTp, Deps()));
      }
    }
  }
  void LogitsBackward(const std::string& p) {
    const uint64_t eh = elem_tokens_ * m_.hidden * s_.bytes_per_value, logits = tokens_ * m_.vocab / s_.tp;
    Elementwise(p + ".cross_entropy", 4 * logits, 2 * logits);
    const Kernel k = GemmBackwardKernel("logits", s_.device, tokens_, m_.vocab / s_.tp, m_.hidden);
    StepKernel(p + ".logits", k);
    if (s_.tp > 1) {
      Step(s_.sp ? g_.Collective(p + ".logits_rs", Coll::kReduceScatter, act_bytes_, Axis::kTp, Deps())
                 : g_.Collective(p + ".logits_ar", Coll::kAllReduce, act_bytes_, Axis::kTp, Deps()));
    }
    Norm(p + ".final_ln", true, 2 * eh, eh);
  }
  void Forward(int64_t mb) {
    const std::string p = "fwd.mb" + N(mb);
    if (!first_) StepWith(PipeRecv(p + ".recv", PrevOffset(), FwdTag(mb, vstage_)));
    if (first_ && s_.kernel_model) EmbeddingForward(p);
    ForwardLayers("fwd", mb);
    if (last_ && s_.lm_head) {
      if (s_.kernel_model) {
        LogitsForward(p);
      } else {
        Step(g_.Compute(p + ".logits", logit_fwd_, logit_bytes_, Deps()));
      }
    }
    if (!last_) PipeSend(p + ".send", NextOffset(), FwdTag(mb, vstage_ + 1));
  }
  // A pipeline message out. Under the kernel model the stage waits for it
  // (Megatron's schedules wait on their batched isend/irecv before going on).
  // In a batched step the send waits for the backward (`deferred_`), then
  // leaves beside the backward's own send; the stage waits for both.
  void PipeSend(const std::string& name, int offset, uint64_t tag) {
    if (defer_send_) {
      deferred_ = DeferredSend{name, offset, tag};
      return;
    }
    const std::vector<NodeRef> deps = Deps();
    const NodeRef snd = g_.Send(name, Axis::kPp, offset, p2p_bytes_, tag, deps);
    if (s_.kernel_model) Step(snd);
    if (deferred_) {
      StepWith(g_.Send(deferred_->name, Axis::kPp, deferred_->offset, p2p_bytes_, deferred_->tag, deps));
      deferred_.reset();
    }
  }
  // The batched step's forward send when the backward sent nothing (first virtual stage).
  void FlushDeferredSend() {
    if (!deferred_) return;
    const DeferredSend d = std::move(*deferred_);
    deferred_.reset();
    PipeSend(d.name, d.offset, d.tag);
  }
  // Gradients in buckets (PyTorch DDP / Megatron's overlapped reduction),
  // dense and expert parameters in separate buckets over their own groups;
  // with --grad-reduce=after-flush every bucket waits for the whole backward.
  void AddGrads(uint64_t bytes, bool flush, bool expert) {
    const AxisSet group = layout_.Effective(expert ? kExpertDp : kDenseDp);
    const int64_t d = expert ? expert_dp_ : dense_dp_;
    if (d <= 1) return;
    uint64_t& bucket = bucket_[expert ? 1 : 0];
    bucket += bytes / s_.bytes_per_value * GradWidth();
    std::vector<uint64_t>& held = held_[expert ? 1 : 0];
    // Nothing to reduce yet; at the flush, the held buckets go even when the last one is empty.
    if ((bucket == 0 && (!flush || held.empty())) || (!flush && bucket < s_.bucket_bytes)) return;
    // After the flush (local DDP) means after the rank's whole backward: with
    // interleaving a chunk's last microbatch flushes its buckets before the
    // other chunks' backward ends, and they wait with the rest.
    if (s_.grad_reduce_after_flush && !(flush && IsLastBackward())) {
      if (bucket > 0) held.push_back(bucket);
      bucket = 0;
      return;
    }
    std::vector<uint64_t> sizes = std::move(held);
    held.clear();
    if (bucket > 0) sizes.push_back(bucket);
    bucket = 0;
    for (uint64_t size : sizes) {
      const std::string p = std::string(expert ? "grad.expert_bucket" : "grad.bucket") + N(buckets_[expert ? 1 : 0]++);
      if (s_.zero == 0) {
        reduced_.push_back(g_.Collective(p + ".dp_ar", Coll::kAllReduce, size, group, Chain()));
      } else {
        const NodeRef rs = g_.Collective(p + ".dp_rs", Coll::kReduceScatter, size, group, Chain());
        reduced_.push_back(rs);
        // The parameters gathered back are 16-bit whatever the gradients' width.
        if (s_.zero < 3 && s_.kernel_model) {
          gathers_.push_back({p + ".param_ag", size / GradWidth() * s_.bytes_per_value / d, group});
        }
        // Without the kernel model there is no step: each bucket's gather follows its reduce-scatter.
        if (s_.zero < 3 && !s_.kernel_model) g_.Collective(p + ".param_ag", Coll::kAllGather, size / d, group, {rs});
      }
    }
  }
  // Bytes of one gradient in the buffer the DP reduction reads: fp32 under the
  // kernel model in bf16 (Megatron's accumulate_allreduce_grads_in_fp32, forced
  // for bf16), else the 16-bit value.
  uint64_t GradWidth() const { return s_.kernel_model && !s_.fp16 ? 4 : s_.bytes_per_value; }
  // Tied embeddings across stages (kernel model): the first and the last
  // virtual stage swap their copies' gradients (Megatron's embedding group
  // all-reduce of two ranks: the same bytes each way) and add them.
  void TiedEmbeddingSync() {
    if (!s_.kernel_model || !s_.lm_head || !m_.tied_embeddings || s_.pp == 1 || !(first_ || last_)) return;
    const uint64_t bytes = m_.vocab * m_.hidden / s_.tp * s_.bytes_per_value;
    const int peer = first_ ? PrevOffset() : NextOffset();
    const uint64_t tag_out = kEmbeddingTag + (first_ ? 0 : 1), tag_in = kEmbeddingTag + (first_ ? 1 : 0);
    g_.Send("grad.embedding_send", Axis::kPp, peer, bytes, tag_out, Chain());
    // Off the chain: with interleaving the last virtual stage's backward ends
    // before the rank's other chunks', which the first stage's gradients wait
    // for; only the optimizer step waits for the sum.
    const NodeRef in = g_.Recv("grad.embedding_recv", Axis::kPp, peer, bytes, tag_in, {});
    const Kernel k = ElementwiseKernel("", s_.device, 2 * bytes, bytes, bytes / s_.bytes_per_value);
    std::vector<NodeRef> deps = Chain();
    deps.push_back(in);
    reduced_.push_back(KernelNode("grad.embedding_add", k, std::move(deps)));
  }
  // After the last backward: the step. Under the kernel model the gradient
  // norm (fp32 gradients read once; its partial sums all-reduced over TP
  // and, sharded, DP; the 4-byte sum over the pipeline stages is left out: a
  // collective across stages would rule out rank classes, for ~2(p−1)
  // message latencies), clipping (read and write) and Adam (fp32 gradient,
  // master weight, momentum and variance read, the last three and the bf16
  // weight written: 16 + 14 bytes per parameter) over the parameters this
  // rank updates (apex's fused Adam: weight, gradient, momentum and variance
  // in fp32, 16 bytes read and 12 written), then the fp32 weights copied to
  // the bf16 model (4 read, 2 written). Then ZeRO-1/2's parameter all-gathers.
  void OptimizerStep() {
    for (NodeRef r : reduced_) StepWith(r);
    if (s_.kernel_model) {
      const uint64_t n = update_params_;
      if (s_.fp16) {
        // Megatron's fp16 optimizer: gradients to fp32, then unscaled and checked for
        // inf/NaN (the flag all-reduced over TP).
        Elementwise("optimizer.grads_to_fp32", 2 * n, 4 * n);
        Elementwise("optimizer.unscale", 4 * n, 4 * n);
        if (s_.tp > 1) Step(g_.Collective("optimizer.found_inf_ar", Coll::kAllReduce, 4, Axis::kTp, Deps()));
      }
      Elementwise("optimizer.grad_norm", 4 * n, 0);
      if (s_.tp > 1) Step(g_.Collective("optimizer.norm_tp_ar", Coll::kAllReduce, 4, Axis::kTp, Deps()));
      if (s_.zero >= 1 && dense_dp_ > 1) {
        Step(g_.Collective("optimizer.norm_dp_ar", Coll::kAllReduce, 4, layout_.Effective(kDenseDp), Deps()));
      }
      Elementwise("optimizer.clip", 4 * n, 4 * n);
      Elementwise("optimizer.adam", 16 * n, 12 * n);
      Elementwise("optimizer.copy_params", 4 * n, 2 * n);  // fp32 main weights to the bf16 model weights
    }
    std::vector<NodeRef> after = Deps();
    for (const PendingGather& g : gathers_) g_.Collective(g.name, Coll::kAllGather, g.bytes, g.group, after);
  }
  void Backward(int64_t mb, bool last_mb) {
    const std::string p = "bwd.mb" + N(mb);
    if (!last_) StepWith(PipeRecv(p + ".recv", NextOffset(), BwdTag(mb, vstage_ + 1)));
    if (s_.recompute == Recompute::kFull) ForwardLayers("recompute", mb);
    if (last_ && s_.lm_head) OutputBackward(p, last_mb);
    const int64_t first = StageFirstLayer(m_, Vstages(), vstage_), n = StageLayers(m_, Vstages(), vstage_);
    if (s_.offload_activations) LoadActivations(mb, first + n - 1);
    for (int64_t j = first + n - 1; j >= first; --j) {
      const std::string lp = p + ".layer" + N(j);
      if (auto it = loads_.find({mb, j}); it != loads_.end()) StepWith(it->second);
      if (s_.offload_activations && j > first) LoadActivations(mb, j - 1);
      BeforeLayer(lp, p + ".layer" + N(j - 1), j, j > first ? j - 1 : -1);
      Ffn(lp + ".mlp", j, true);
      Attention(lp + ".attn", true);
      if (s_.kernel_model && !s_.grad_accumulation_fused) {
        // main_grad += grad (16-bit): the buffer and the gradient read, the buffer written.
        const uint64_t params = (DenseGradBytes(j) + ExpertGradBytes(j)) / s_.bytes_per_value;
        Elementwise(lp + ".grad_accumulate", (GradWidth() + s_.bytes_per_value) * params, GradWidth() * params);
      }
      if (last_mb) {
        AddGrads(ExpertGradBytes(j), false, true);
        AddGrads(DenseGradBytes(j), false, false);
      }
    }
    if (first_ && s_.kernel_model) EmbeddingBackward(p);
    // The gradient to the previous stage leaves before the gradient buckets
    // are flushed (kernel model, as Megatron does it; the bare model kept the
    // flush first).
    if (!first_ && s_.kernel_model) PipeSend(p + ".send", PrevOffset(), BwdTag(mb, vstage_));
    if (last_mb) {
      uint64_t emb = 0;
      if (first_) emb = (m_.vocab + (m_.learned_positions ? m_.seq_len : 0)) * m_.hidden / s_.tp * s_.bytes_per_value;
      AddGrads(0, true, true);
      AddGrads(emb, true, false);
      TiedEmbeddingSync();
      if (s_.offload_optimizer && !s_.kernel_model) {
        // The optimizer states come in for the step and go back out (the
        // bare model does not time the step's arithmetic).
        NodeRef load = g_.MemLoad("optimizer.load", optimizer_bytes_, Chain());
        g_.MemStore("optimizer.store", optimizer_bytes_, {load});
      }
    }
    if (!first_ && !s_.kernel_model)
      g_.Send(p + ".send", Axis::kPp, PrevOffset(), p2p_bytes_, BwdTag(mb, vstage_), Deps());
    // The step, once the rank's last backward (of every chunk) is done.
    if (last_mb && IsLastBackward() && s_.kernel_model) RunOptimizer();
  }
  // The output layer's backward and, after the last microbatch, its gradients into the buckets.
  void OutputBackward(const std::string& p, bool last_mb) {
    if (s_.kernel_model) {
      LogitsBackward(p);
    } else {
      Step(g_.Compute(p + ".logits", 2 * logit_fwd_, 2 * logit_bytes_, Deps()));
    }
    if (last_mb && (s_.pp > 1 || !m_.tied_embeddings)) {
      AddGrads(m_.vocab * m_.hidden / s_.tp * s_.bytes_per_value, false, false);
    }
    // The final norm's weights (kernel model; the bare model leaves them out).
    if (last_mb && s_.kernel_model) AddGrads((m_.rms_norm ? 1 : 2) * m_.hidden * s_.bytes_per_value, false, false);
  }
  // The optimizer step (kernel model), its states brought in from the pool and back with --offload=optimizer.
  void RunOptimizer() {
    if (!s_.offload_optimizer) return OptimizerStep();
    StepWith(g_.MemLoad("optimizer.load", optimizer_bytes_, Chain()));
    OptimizerStep();
    g_.MemStore("optimizer.store", optimizer_bytes_, Chain());
  }
  // This backward is the rank's last one: chunk 0 (the schedules end there).
  bool IsLastBackward() const { return vstage_ == stage_; }

  // P2P tags: pipeline messages use 2·(mb·V + j) (+1); ring-attention
  // messages count up from here (the CP peers run the same class, so the
  // n-th send of one matches the n-th receive of the next).
  static constexpr uint64_t kCpTagBase = uint64_t{1} << 40;
  static constexpr uint64_t kEmbeddingTag = uint64_t{1} << 41;  // tied-embedding gradients: +0 first→last, +1 back

  const ModelDesc& m_;
  const Strategy& s_;
  int64_t stage_;
  const Layout& layout_;
  const GenStop& stop_;
  std::string halted_;
  int64_t vstage_ = 0;
  bool first_ = false, last_ = false;
  struct DeferredSend {
    std::string name;
    int offset;
    uint64_t tag;
  };
  bool defer_send_ = false;               // inside a batched step's forward
  std::optional<DeferredSend> deferred_;  // its send, until the backward's
  GraphBuilder g_;
  NodeRef last_node_ = 0;
  bool has_last_ = false;
  std::vector<NodeRef> pending_;
  uint64_t tokens_ = 0, act_bytes_ = 0, qkv_ops_ = 0, proj_ops_ = 0, core_step_ = 0, attn_core_ = 0, attn_fwd_ = 0;
  uint64_t kv_bytes_ = 0, mlp_fwd_ = 0, logit_fwd_ = 0;
  uint64_t attn_w_bytes_ = 0, qkv_w_bytes_ = 0, proj_w_bytes_ = 0, mlp_w_bytes_ = 0, logit_bytes_ = 0;
  uint64_t moe_router_ = 0, moe_experts_ = 0, moe_a2a_ = 0, moe_router_bytes_ = 0, moe_expert_bytes_ = 0;
  int64_t dense_dp_ = 1, expert_dp_ = 1;
  uint64_t cp_messages_ = 0;
  uint64_t act_saved_ = 0, optimizer_bytes_ = 0;
  std::map<std::pair<int64_t, int64_t>, NodeRef> stored_, loads_;  // (microbatch, layer) -> MEM node
  std::vector<NodeRef> gathered_;                                  // ZeRO-3: the prefetched gathers of the next layer
  uint64_t bucket_[2] = {0, 0};
  int64_t buckets_[2] = {0, 0};
  std::vector<uint64_t> held_[2];  // --grad-reduce=after-flush: full buckets waiting for the flush
  std::vector<NodeRef> reduced_;   // the gradient reductions the optimizer step waits for
  struct PendingGather {
    std::string name;
    uint64_t bytes;
    AxisSet group;
  };
  std::vector<PendingGather> gathers_;  // ZeRO-1/2: parameter all-gathers, after the step
  uint64_t update_params_ = 0, local_params_ = 0, p2p_bytes_ = 0, elem_tokens_ = 0;
  BlockKernels attn_f_, attn_b_, mlp_f_, mlp_b_;
  std::vector<Kernel> core_recompute_;
};

}  // namespace

int64_t StageLayers(const ModelDesc& m, int64_t pp, int64_t stage) {
  return m.layers / pp + (stage < m.layers % pp ? 1 : 0);
}

int64_t StageFirstLayer(const ModelDesc& m, int64_t pp, int64_t stage) {
  return stage * (m.layers / pp) + std::min(stage, m.layers % pp);
}

RankParamSplit RankParamsSplit(const ModelDesc& m, const Strategy& s, int64_t stage) {
  uint64_t p = 0, e = 0;
  const int64_t first = StageFirstLayer(m, s.pp, stage);
  for (int64_t j = first; j < first + StageLayers(m, s.pp, stage); ++j) {
    p += LayerParams(m, j) - ExpertParams(m, j);
    e += ExpertParams(m, j);
  }
  if (stage == 0) p += (m.vocab + (m.learned_positions ? m.seq_len : 0)) * m.hidden;
  if (stage == s.pp - 1) {
    if (s.pp > 1 || !m.tied_embeddings) p += m.vocab * m.hidden;
    p += (m.rms_norm ? 1 : 2) * m.hidden;
  }
  return {p / s.tp, e / (s.tp * s.ep)};
}

uint64_t RankParams(const ModelDesc& m, const Strategy& s, int64_t stage) {
  const RankParamSplit r = RankParamsSplit(m, s, stage);
  return r.dense + r.expert;
}

namespace {

// Nodes per microbatch and layer (forward, backward and recomputation) with
// every option on (MoE, ZeRO-3, offload, full recomputation; measured at most
// 15 bare, 66 with the kernel model) plus each ring-attention step's with CP
// (measured 6 to 9.2 per step), per microbatch and virtual stage (pipeline
// messages, logits), per layer (gradient buckets) and per stage (the step).
constexpr uint64_t kNodesPerLayerPass = 32, kNodesPerLayerPassKernels = 80, kNodesPerCpStep = 12;
constexpr uint64_t kNodesPerStagePass = 32, kNodesPerLayer = 16, kNodesPerStage = 128;

// A forward node's operations at most: 1e18 (the trace reader's limit for a
// node) / 32 leaves room for the backward pass (2x), recomputation and the
// kernel model's multiples of it within uint64.
constexpr int64_t kMaxForwardOps = static_cast<int64_t>(kMaxNumOps / 32);

// The products each generated node's operations and bytes are made of, checked before they are formed.
Status CheckNodeSizes(const ModelDesc& m, const Strategy& s) {
  const int64_t mats = m.gated_ffn ? 3 : 2, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const Factor b{"--microbatch-size", s.microbatch_size}, sq{"seq_len/cp", m.seq_len / s.cp}, h{"hidden", m.hidden};
  const Factor bpv{"bytes per value", static_cast<int64_t>(s.bytes_per_value)};
  std::vector<std::vector<Factor>> ops = {
      {b, sq, h, {"vocab", m.vocab}, {"2", 2}},
      {b, sq, h, {"ffn", m.ffn}, {"2·matrices", 2 * mats}},
      {b, sq, h, {"(heads+2·kv_heads)·head_dim", q + 2 * kv}, {"2", 2}},
      {b, sq, {"seq_len", m.seq_len}, {"heads·head_dim", q}, {"4", 4}},
  };
  std::vector<std::vector<Factor>> bytes = {{b, sq, h, bpv}, {b, sq, {"(heads+2·kv_heads)·head_dim", q + 2 * kv}, bpv}};
  if (m.experts > 0) {
    ops.push_back({b,
                   sq,
                   h,
                   {"expert_ffn", m.expert_ffn},
                   {"2·matrices", 2 * mats},
                   {"top_k+shared_experts", m.top_k + m.shared_experts}});
    ops.push_back({b, sq, h, {"experts", m.experts}, {"2", 2}});
    bytes.push_back({b, sq, h, {"top_k", m.top_k}, bpv});
  }
  const std::string ops_allowed = "at most " + N(kMaxForwardOps) +
                                  " operations in one generated forward node (1e18/32, room for the backward pass); a "
                                  "smaller --microbatch-size, more --cp, or a smaller model";
  const std::string bytes_allowed = "at most " + N(static_cast<int64_t>(kMaxBytes)) +
                                    " bytes (2^48) in one generated message; a smaller --microbatch-size or more --cp";
  for (const auto& p : ops) ORRERY_RETURN_IF_ERROR(CheckedProduct(p, kMaxForwardOps, Where{}, ops_allowed).status());
  for (const auto& p : bytes) {
    ORRERY_RETURN_IF_ERROR(CheckedProduct(p, static_cast<int64_t>(kMaxBytes), Where{}, bytes_allowed).status());
  }
  return Status::Ok();
}

std::string AboutGiB(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// The workload's nodes against kMaxGenNodes, before anything is built.
Status CheckGraphSize(const ModelDesc& m, const Strategy& s) {
  const uint64_t nodes = EstimateGenNodes(m, s);
  if (nodes <= kMaxGenNodes) return Status::Ok();
  return ValueError(Where{"", 0, "--microbatches·layers"},
                    N(s.microbatches) + "·" + N(m.layers) + " over " + N(s.pp) + " stage(s)",
                    "the generated workload would hold about " + std::to_string(nodes) + " nodes (about " +
                        AboutGiB(nodes * kGenBytesPerNode) + ")",
                    "at most " + std::to_string(kMaxGenNodes) + " nodes (about " +
                        AboutGiB(kMaxGenNodes * kGenBytesPerNode) +
                        "): fewer --microbatches (a smaller global batch) or fewer layers");
}

}  // namespace

uint64_t EstimateGenNodes(const ModelDesc& m, const Strategy& s) {
  using U = unsigned __int128;  // the inputs are bounded (flags, model YAML); this cannot overflow either way
  const U mb = static_cast<U>(std::max<int64_t>(s.microbatches, 0));
  const int64_t chunks = s.schedule == Schedule::kInterleaved ? std::max<int64_t>(s.chunks, 1) : 1;
  const U passes = static_cast<U>(std::max<int64_t>(s.pp, 0)) * static_cast<U>(chunks);
  const U layers = static_cast<U>(std::max<int64_t>(m.layers, 0)), stages = static_cast<U>(std::max<int64_t>(s.pp, 0));
  const U per_layer = (s.kernel_model ? kNodesPerLayerPassKernels : kNodesPerLayerPass) +
                      kNodesPerCpStep * static_cast<U>(std::max<int64_t>(s.cp, 1));
  const U n = mb * (layers * per_layer + passes * kNodesPerStagePass) + layers * kNodesPerLayer +
              stages * kNodesPerStage;
  return n > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(n);
}

Result<int64_t> StrategyNpus(const Strategy& s) {
  return CheckedProduct({{"--tp", s.tp}, {"--cp", s.cp}, {"--ep", s.ep}, {"--dp", s.dp}, {"--pp", s.pp}}, kMaxNpus,
                        Where{}, "NPUs up to " + N(kMaxNpus) + " (2^26)");
}

Result<int64_t> StrategyGlobalBatch(const Strategy& s) {
  return CheckedProduct(
      {{"--microbatch-size", s.microbatch_size}, {"--microbatches", s.microbatches}, {"--dp", s.dp}, {"--ep", s.ep}},
      kMaxGlobalBatch, Where{}, "samples per iteration up to " + N(kMaxGlobalBatch) + " (2^30)");
}

Status ValidateStrategy(const ModelDesc& m, const Strategy& s) {
  auto bad = [](const std::string& msg) { return Status::Invalid(msg); };
  ORRERY_PARSE_OR_RETURN(const int64_t product, StrategyNpus(s));
  ORRERY_PARSE_OR_RETURN(const int64_t batch, StrategyGlobalBatch(s));
  if (s.npus != 0 && product != s.npus) {
    return bad("tp·cp·ep·dp·pp = " + N(s.tp) + "·" + N(s.cp) + "·" + N(s.ep) + "·" + N(s.dp) + "·" + N(s.pp) + " = " +
               N(product) + " NPUs, but --npus = " + N(s.npus) + "; allowed: sizes whose product is the NPU count");
  }
  if (m.heads % s.tp != 0) {
    return bad("--tp = " + N(s.tp) + " does not divide the " + N(m.heads) + " attention heads of " + m.name +
               "; allowed: a divisor of heads");
  }
  if (m.kv_heads % s.tp != 0) {
    return bad("--tp = " + N(s.tp) + " does not divide the " + N(m.kv_heads) + " KV heads of " + m.name +
               "; allowed: a divisor of kv_heads");
  }
  if (m.ffn % s.tp != 0 || m.vocab % s.tp != 0) {
    return bad("--tp = " + N(s.tp) + " does not divide ffn = " + N(m.ffn) + " and vocab = " + N(m.vocab) + " of " +
               m.name + "; allowed: a divisor of both");
  }
  if (m.layers < s.pp) {
    return bad("--pp = " + N(s.pp) + " stages but " + m.name + " has only " + N(m.layers) +
               " layers; allowed: pp <= layers");
  }
  if (s.ep > 1 && (m.experts == 0 || m.experts % s.ep != 0)) {
    return bad("--ep = " + N(s.ep) + " does not divide the " + N(m.experts) + " experts of " + m.name +
               "; allowed: a divisor of experts");
  }
  if (m.seq_len % s.cp != 0) {
    return bad("--cp = " + N(s.cp) + " does not divide seq_len = " + N(m.seq_len) + " of " + m.name +
               "; allowed: a divisor of seq_len (each rank holds seq_len/cp tokens)");
  }
  if (s.sp && (m.seq_len / s.cp * s.microbatch_size) % s.tp != 0) {
    return bad("--sp: (seq_len/cp)·microbatch-size = " + N(m.seq_len / s.cp * s.microbatch_size) +
               " is not divisible by --tp = " + N(s.tp) + "; allowed: a multiple of tp");
  }
  if (s.schedule == Schedule::kInterleaved) {
    if (s.chunks < 2 || s.pp < 2) {
      return bad("--schedule=interleaved:" + N(s.chunks) + " with --pp = " + N(s.pp) +
                 "; allowed: 2 or more chunks and 2 or more stages");
    }
    if (m.layers % (s.pp * s.chunks) != 0) {
      return bad("--schedule=interleaved:" + N(s.chunks) + ": " + N(m.layers) +
                 " layers do not split into pp·chunks = " + N(s.pp * s.chunks) +
                 " equal chunks; allowed: layers divisible by pp·chunks");
    }
    if (s.microbatches % s.pp != 0) {
      return bad("--schedule=interleaved: --microbatches = " + N(s.microbatches) +
                 " is not a multiple of --pp = " + N(s.pp) + "; allowed: a multiple of pp (Megatron's rule)");
    }
  }
  ORRERY_RETURN_IF_ERROR(CheckNodeSizes(m, s));
  ORRERY_RETURN_IF_ERROR(CheckGraphSize(m, s));
  if (s.global_batch != 0 && s.global_batch != batch) {
    return bad("--global-batch = " + N(s.global_batch) +
               " is not microbatch-size·microbatches·dp·ep = " + N(s.microbatch_size) + "·" + N(s.microbatches) + "·" +
               N(s.dp) + "·" + N(s.ep) + " = " + N(batch) + "; allowed: a multiple of microbatch-size·dp·ep");
  }
  return Status::Ok();
}

Result<Workload> GenerateDense(const ModelDesc& m, const Strategy& s, const GenStop& stop) {
  ORRERY_RETURN_IF_ERROR(ValidateStrategy(m, s));
  Workload w;
  w.layout = Layout({s.tp, s.cp, s.ep, s.dp, s.pp}, s.order);
  for (int64_t k = 0; k < s.pp; ++k) {
    if (stop && stop()) return Status::Env("generation stopped before stage " + N(k) + " of " + N(s.pp) + "'s graph");
    StageGen gen(m, s, k, w.layout, stop);
    w.classes.push_back(gen.Run());
    if (!gen.halted().empty()) return Status::Env("generation stopped at " + gen.halted());
  }
  w.class_of_rank.resize(w.layout.npus());
  for (int64_t r = 0; r < w.layout.npus(); ++r) w.class_of_rank[r] = static_cast<int>(w.layout.Coord(r, Axis::kPp));
  return w;
}

}  // namespace orrery::gen
