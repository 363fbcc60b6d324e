#include "gen/strategy.h"

#include <algorithm>
#include <map>

namespace orrery::gen {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

// Generates one pipeline stage's graph (the class every rank of the stage runs).
class StageGen {
 public:
  StageGen(const ModelDesc& m, const Strategy& s, int64_t stage, const Layout& layout)
      : m_(m), s_(s), stage_(stage), layout_(layout) {
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
    SetChunk(0);
  }

  GraphBuilder Run() {
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
    for (const auto& [fwd, mb] : ops) fwd ? Forward(mb) : Backward(mb, mb == mbs - 1);
    return std::move(g_);
  }

 private:
  // Megatron's interleaved 1F1B (Narayanan et al. 2021 §2.2.2): v chunks per
  // rank, virtual stage j = chunk·p + stage; step k of m·v runs chunk
  // (k mod pv) div p (backward: v−1 minus that) of microbatch (k div pv)·p + k mod p.
  GraphBuilder RunInterleaved() {
    const int64_t p = s_.pp, v = s_.chunks, total = s_.microbatches * v;
    const int64_t warm = std::min((p - stage_ - 1) * 2 + (v - 1) * p, total);
    auto mb_of = [&](int64_t k) { return k / (p * v) * p + k % p; };
    auto fwd = [&](int64_t k) {
      SetChunk(k % (p * v) / p);
      Forward(mb_of(k));
    };
    auto bwd = [&](int64_t k) {
      SetChunk(v - 1 - k % (p * v) / p);
      Backward(mb_of(k), mb_of(k) == s_.microbatches - 1);
    };
    for (int64_t k = 0; k < warm; ++k) fwd(k);
    for (int64_t i = 0; i < total - warm; ++i) {
      fwd(warm + i);
      bwd(i);
    }
    for (int64_t k = total - warm; k < total; ++k) bwd(k);
    return std::move(g_);
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
  template <typename Body>
  void Block(const std::string& name, Body body) {
    const bool tp = s_.tp > 1;
    if (tp && s_.sp) Step(g_.Collective(name + ".sp_ag", Coll::kAllGather, act_bytes_ / s_.tp, Axis::kTp, Deps()));
    body();
    if (tp) {
      Step(s_.sp ? g_.Collective(name + ".sp_rs", Coll::kReduceScatter, act_bytes_, Axis::kTp, Deps())
                 : g_.Collective(name + ".tp_ar", Coll::kAllReduce, act_bytes_, Axis::kTp, Deps()));
    }
  }
  void Block(const std::string& name, uint64_t ops, uint64_t bytes) {
    Block(name, [&] { Step(g_.Compute(name, ops, bytes, Deps())); });
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
      block = Step(g_.Compute(name + ".qkv", qkv_ops_ + step_ops, qkv_w_bytes_ + act_bytes_ + block_bytes, Deps()));
    } else {
      block = Step(g_.Compute(name + ".proj", 2 * proj_ops_, 2 * (proj_w_bytes_ + 2 * act_bytes_), Deps()));
      Step(g_.Compute(name + ".core0", step_ops, block_bytes, Deps()));
    }
    for (int64_t i = 1; i < s_.cp; ++i) {
      const uint64_t tag = kCpTagBase + cp_messages_++;
      g_.Send(name + ".kv_send" + N(i), Axis::kCp, +1, mul * kv_bytes_, tag, {block});
      block = g_.Recv(name + ".kv_recv" + N(i), Axis::kCp, -1, mul * kv_bytes_, tag, {});
      StepWith(block);
      Step(g_.Compute(name + ".core" + N(i), step_ops, block_bytes, Deps()));
    }
    if (!backward) {
      Step(g_.Compute(name + ".proj", proj_ops_, proj_w_bytes_ + 2 * act_bytes_, Deps()));
    } else {
      Step(g_.Compute(name + ".qkv", 2 * qkv_ops_, 2 * (qkv_w_bytes_ + act_bytes_ + block_bytes / 2), Deps()));
    }
  }
  void Attention(const std::string& name, bool backward) {
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
    if (!IsMoeLayer(m_, layer)) return Block(name, mul * mlp_fwd_, mul * (mlp_w_bytes_ + 2 * act_bytes_));
    Block(name, [&] {
      const bool a2a = s_.ep > 1;
      if (!backward) Step(g_.Compute(name + ".router", moe_router_, moe_router_bytes_, Deps()));
      if (a2a)
        Step(g_.Collective(name + (backward ? ".combine_grad" : ".dispatch"), Coll::kAllToAll, moe_a2a_, Axis::kEp,
                           Deps()));
      Step(g_.Compute(name + ".experts", mul * moe_experts_, mul * moe_expert_bytes_, Deps()));
      if (a2a)
        Step(g_.Collective(name + (backward ? ".dispatch_grad" : ".combine"), Coll::kAllToAll, moe_a2a_, Axis::kEp,
                           Deps()));
      if (backward) Step(g_.Compute(name + ".router", 2 * moe_router_, 2 * moe_router_bytes_, Deps()));
    });
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
  void Forward(int64_t mb) {
    if (!first_)
      StepWith(g_.Recv("fwd.mb" + N(mb) + ".recv", Axis::kPp, PrevOffset(), act_bytes_, FwdTag(mb, vstage_), {}));
    ForwardLayers("fwd", mb);
    if (last_ && s_.lm_head) Step(g_.Compute("fwd.mb" + N(mb) + ".logits", logit_fwd_, logit_bytes_, Deps()));
    if (!last_)
      g_.Send("fwd.mb" + N(mb) + ".send", Axis::kPp, NextOffset(), act_bytes_, FwdTag(mb, vstage_ + 1), Deps());
  }
  // Gradients in buckets (PyTorch DDP / Megatron's overlapped reduction),
  // dense and expert parameters in separate buckets over their own groups.
  void AddGrads(uint64_t bytes, bool flush, bool expert) {
    const AxisSet group = layout_.Effective(expert ? kExpertDp : kDenseDp);
    const int64_t d = expert ? expert_dp_ : dense_dp_;
    if (d <= 1) return;
    uint64_t& bucket = bucket_[expert ? 1 : 0];
    bucket += bytes;
    if (bucket == 0 || (!flush && bucket < s_.bucket_bytes)) return;
    const std::string p = std::string(expert ? "grad.expert_bucket" : "grad.bucket") + N(buckets_[expert ? 1 : 0]++);
    if (s_.zero == 0) {
      g_.Collective(p + ".dp_ar", Coll::kAllReduce, bucket, group, Chain());
    } else {
      NodeRef rs = g_.Collective(p + ".dp_rs", Coll::kReduceScatter, bucket, group, Chain());
      if (s_.zero < 3) g_.Collective(p + ".param_ag", Coll::kAllGather, bucket / d, group, {rs});
    }
    bucket = 0;
  }
  void Backward(int64_t mb, bool last_mb) {
    const std::string p = "bwd.mb" + N(mb);
    if (!last_) StepWith(g_.Recv(p + ".recv", Axis::kPp, NextOffset(), act_bytes_, BwdTag(mb, vstage_ + 1), {}));
    if (s_.recompute == Recompute::kFull) ForwardLayers("recompute", mb);
    if (last_ && s_.lm_head) {
      Step(g_.Compute(p + ".logits", 2 * logit_fwd_, 2 * logit_bytes_, Deps()));
      if (last_mb && (s_.pp > 1 || !m_.tied_embeddings)) {
        AddGrads(m_.vocab * m_.hidden / s_.tp * s_.bytes_per_value, false, false);
      }
    }
    const int64_t first = StageFirstLayer(m_, Vstages(), vstage_), n = StageLayers(m_, Vstages(), vstage_);
    if (s_.offload_activations) LoadActivations(mb, first + n - 1);
    for (int64_t j = first + n - 1; j >= first; --j) {
      const std::string lp = p + ".layer" + N(j);
      if (auto it = loads_.find({mb, j}); it != loads_.end()) StepWith(it->second);
      if (s_.offload_activations && j > first) LoadActivations(mb, j - 1);
      BeforeLayer(lp, p + ".layer" + N(j - 1), j, j > first ? j - 1 : -1);
      Ffn(lp + ".mlp", j, true);
      Attention(lp + ".attn", true);
      if (last_mb) {
        AddGrads(ExpertGradBytes(j), false, true);
        AddGrads(DenseGradBytes(j), false, false);
      }
    }
    if (last_mb) {
      uint64_t emb = 0;
      if (first_) emb = (m_.vocab + (m_.learned_positions ? m_.seq_len : 0)) * m_.hidden / s_.tp * s_.bytes_per_value;
      AddGrads(0, true, true);
      AddGrads(emb, true, false);
      if (s_.offload_optimizer) {
        // The optimizer states come in for the step and go back out (the
        // step's own arithmetic is not modelled).
        NodeRef load = g_.MemLoad("optimizer.load", optimizer_bytes_, Chain());
        g_.MemStore("optimizer.store", optimizer_bytes_, {load});
      }
    }
    if (!first_) g_.Send(p + ".send", Axis::kPp, PrevOffset(), act_bytes_, BwdTag(mb, vstage_), Deps());
  }

  // P2P tags: pipeline messages use 2·(mb·V + j) (+1); ring-attention
  // messages count up from here (the CP peers run the same class, so the
  // n-th send of one matches the n-th receive of the next).
  static constexpr uint64_t kCpTagBase = uint64_t{1} << 40;

  const ModelDesc& m_;
  const Strategy& s_;
  int64_t stage_;
  const Layout& layout_;
  int64_t vstage_ = 0;
  bool first_ = false, last_ = false;
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

Status ValidateStrategy(const ModelDesc& m, const Strategy& s) {
  auto bad = [](const std::string& msg) { return Status::Invalid(msg); };
  const int64_t product = s.tp * s.cp * s.ep * s.dp * s.pp;
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
  if (s.global_batch != 0 && s.global_batch != s.microbatch_size * s.microbatches * s.dp * s.ep) {
    return bad("--global-batch = " + N(s.global_batch) + " is not microbatch-size·microbatches·dp·ep = " +
               N(s.microbatch_size) + "·" + N(s.microbatches) + "·" + N(s.dp) + "·" + N(s.ep) + " = " +
               N(s.microbatch_size * s.microbatches * s.dp * s.ep) + "; allowed: a multiple of microbatch-size·dp·ep");
  }
  return Status::Ok();
}

Result<Workload> GenerateDense(const ModelDesc& m, const Strategy& s) {
  ORRERY_RETURN_IF_ERROR(ValidateStrategy(m, s));
  Workload w;
  w.layout = Layout({s.tp, s.cp, s.ep, s.dp, s.pp}, s.order);
  for (int64_t k = 0; k < s.pp; ++k) w.classes.push_back(StageGen(m, s, k, w.layout).Run());
  w.class_of_rank.resize(w.layout.npus());
  for (int64_t r = 0; r < w.layout.npus(); ++r) w.class_of_rank[r] = static_cast<int>(w.layout.Coord(r, Axis::kPp));
  return w;
}

}  // namespace orrery::gen
