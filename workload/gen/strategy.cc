#include "workload/gen/strategy.h"

#include <algorithm>

namespace orrery::gen {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

// Generates one pipeline stage's graph (the class every rank of the stage runs).
class StageGen {
 public:
  StageGen(const ModelDesc& m, const Strategy& s, int64_t stage) : m_(m), s_(s), stage_(stage) {
    const uint64_t b = s.microbatch_size, sq = m.seq_len, h = m.hidden, t = s.tp;
    const uint64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
    const uint64_t f = m.ffn, mats = m.gated_ffn ? 3 : 2;
    act_bytes_ = b * sq * h * s.bytes_per_value;
    attn_core_ = 4 * b * sq * sq * q / t;
    attn_fwd_ = (2 * b * sq * h * (q + 2 * kv) + 2 * b * sq * q * h) / t + attn_core_;
    mlp_fwd_ = 2 * b * sq * h * f * mats / t;
    logit_fwd_ = 2 * b * sq * h * m.vocab / t;
    attn_w_bytes_ = (h * (q + 2 * kv) + q * h) / t * s.bytes_per_value;
    mlp_w_bytes_ = mats * h * f / t * s.bytes_per_value;
    logit_bytes_ = (m.vocab * h / t + b * sq * h + b * sq * m.vocab / t) * s.bytes_per_value;
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
  // A TP-split block: [AG] compute [RS] with SP, compute [AR] without.
  // comm_size as ASTRA-sim reads it: all-gather = the shard each rank
  // contributes (output = shard·group size); all-reduce and reduce-scatter =
  // the whole buffer.
  void Block(const std::string& name, uint64_t ops, uint64_t bytes) {
    const bool tp = s_.tp > 1;
    if (tp && s_.sp) Step(g_.Collective(name + ".sp_ag", Coll::kAllGather, act_bytes_ / s_.tp, Axis::kTp, Deps()));
    Step(g_.Compute(name, ops, bytes, Deps()));
    if (tp) {
      Step(s_.sp ? g_.Collective(name + ".sp_rs", Coll::kReduceScatter, act_bytes_, Axis::kTp, Deps())
                 : g_.Collective(name + ".tp_ar", Coll::kAllReduce, act_bytes_, Axis::kTp, Deps()));
    }
  }
  uint64_t LayerGradBytes(int64_t layer) const {
    return static_cast<uint64_t>(LayerParams(m_, layer)) / s_.tp * s_.bytes_per_value;
  }
  void GatherParams(const std::string& name, int64_t layer) {
    if (s_.zero == 3 && s_.dp > 1) {
      Step(g_.Collective(name + ".zero3_ag", Coll::kAllGather, LayerGradBytes(layer) / s_.dp, Axis::kDp, Deps()));
    }
  }
  void ForwardLayers(const std::string& tag, int64_t mb) {
    const int64_t first = StageFirstLayer(m_, Vstages(), vstage_), n = StageLayers(m_, Vstages(), vstage_);
    for (int64_t j = first; j < first + n; ++j) {
      const std::string p = tag + ".mb" + N(mb) + ".layer" + N(j);
      GatherParams(p, j);
      Block(p + ".attn", attn_fwd_, attn_w_bytes_ + 2 * act_bytes_);
      Block(p + ".mlp", mlp_fwd_, mlp_w_bytes_ + 2 * act_bytes_);
    }
  }
  void Forward(int64_t mb) {
    if (!first_) StepWith(g_.Recv("fwd.mb" + N(mb) + ".recv", Axis::kPp, PrevOffset(), act_bytes_, FwdTag(mb, vstage_), {}));
    ForwardLayers("fwd", mb);
    if (last_ && s_.lm_head) Step(g_.Compute("fwd.mb" + N(mb) + ".logits", logit_fwd_, logit_bytes_, Deps()));
    if (!last_) g_.Send("fwd.mb" + N(mb) + ".send", Axis::kPp, NextOffset(), act_bytes_, FwdTag(mb, vstage_ + 1), Deps());
  }
  void AddGrads(uint64_t bytes, bool flush) {
    if (s_.dp <= 1) return;
    bucket_ += bytes;
    if (bucket_ == 0 || (!flush && bucket_ < s_.bucket_bytes)) return;
    const std::string p = "grad.bucket" + N(buckets_++);
    if (s_.zero == 0) {
      g_.Collective(p + ".dp_ar", Coll::kAllReduce, bucket_, Axis::kDp, Chain());
    } else {
      NodeRef rs = g_.Collective(p + ".dp_rs", Coll::kReduceScatter, bucket_, Axis::kDp, Chain());
      if (s_.zero < 3) g_.Collective(p + ".param_ag", Coll::kAllGather, bucket_ / s_.dp, Axis::kDp, {rs});
    }
    bucket_ = 0;
  }
  void Backward(int64_t mb, bool last_mb) {
    const std::string p = "bwd.mb" + N(mb);
    if (!last_) StepWith(g_.Recv(p + ".recv", Axis::kPp, NextOffset(), act_bytes_, BwdTag(mb, vstage_ + 1), {}));
    if (s_.recompute == Recompute::kFull) ForwardLayers("recompute", mb);
    if (last_ && s_.lm_head) {
      Step(g_.Compute(p + ".logits", 2 * logit_fwd_, 2 * logit_bytes_, Deps()));
      if (last_mb && (s_.pp > 1 || !m_.tied_embeddings)) AddGrads(m_.vocab * m_.hidden / s_.tp * s_.bytes_per_value, false);
    }
    const int64_t first = StageFirstLayer(m_, Vstages(), vstage_), n = StageLayers(m_, Vstages(), vstage_);
    const uint64_t extra = s_.recompute == Recompute::kSelective ? attn_core_ : 0;
    for (int64_t j = first + n - 1; j >= first; --j) {
      const std::string lp = p + ".layer" + N(j);
      GatherParams(lp, j);
      Block(lp + ".mlp", 2 * mlp_fwd_, 2 * (mlp_w_bytes_ + 2 * act_bytes_));
      Block(lp + ".attn", 2 * attn_fwd_ + extra, 2 * (attn_w_bytes_ + 2 * act_bytes_));
      if (last_mb) AddGrads(LayerGradBytes(j), false);
    }
    if (last_mb) {
      uint64_t emb = 0;
      if (first_) emb = (m_.vocab + (m_.learned_positions ? m_.seq_len : 0)) * m_.hidden / s_.tp * s_.bytes_per_value;
      AddGrads(emb, true);
    }
    if (!first_) g_.Send(p + ".send", Axis::kPp, PrevOffset(), act_bytes_, BwdTag(mb, vstage_), Deps());
  }

  const ModelDesc& m_;
  const Strategy& s_;
  int64_t stage_;
  int64_t vstage_ = 0;
  bool first_ = false, last_ = false;
  GraphBuilder g_;
  NodeRef last_node_ = 0;
  bool has_last_ = false;
  std::vector<NodeRef> pending_;
  uint64_t act_bytes_ = 0, attn_core_ = 0, attn_fwd_ = 0, mlp_fwd_ = 0, logit_fwd_ = 0;
  uint64_t attn_w_bytes_ = 0, mlp_w_bytes_ = 0, logit_bytes_ = 0;
  uint64_t bucket_ = 0;
  int64_t buckets_ = 0;
};

}  // namespace

int64_t StageLayers(const ModelDesc& m, int64_t pp, int64_t stage) {
  return m.layers / pp + (stage < m.layers % pp ? 1 : 0);
}

int64_t StageFirstLayer(const ModelDesc& m, int64_t pp, int64_t stage) {
  return stage * (m.layers / pp) + std::min(stage, m.layers % pp);
}

uint64_t RankParams(const ModelDesc& m, const Strategy& s, int64_t stage) {
  uint64_t p = 0;
  const int64_t first = StageFirstLayer(m, s.pp, stage);
  for (int64_t j = first; j < first + StageLayers(m, s.pp, stage); ++j) p += LayerParams(m, j);
  if (stage == 0) p += (m.vocab + (m.learned_positions ? m.seq_len : 0)) * m.hidden;
  if (stage == s.pp - 1) {
    if (s.pp > 1 || !m.tied_embeddings) p += m.vocab * m.hidden;
    p += (m.rms_norm ? 1 : 2) * m.hidden;
  }
  return p / s.tp;
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
  if (s.cp > 1 || s.ep > 1) return bad("--cp and --ep > 1 are not generated yet (see docs/generator.md, status)");
  if (m.experts > 0) return bad(m.name + " is a MoE model; MoE layers are not generated yet (see docs/generator.md)");
  if (s.sp && (m.seq_len * s.microbatch_size) % s.tp != 0) {
    return bad("--sp: seq_len·microbatch-size = " + N(m.seq_len * s.microbatch_size) + " is not divisible by --tp = " +
               N(s.tp) + "; allowed: a multiple of tp");
  }
  if (s.schedule == Schedule::kInterleaved) {
    if (s.chunks < 2 || s.pp < 2) {
      return bad("--schedule=interleaved:" + N(s.chunks) + " with --pp = " + N(s.pp) +
                 "; allowed: 2 or more chunks and 2 or more stages");
    }
    if (m.layers % (s.pp * s.chunks) != 0) {
      return bad("--schedule=interleaved:" + N(s.chunks) + ": " + N(m.layers) + " layers do not split into pp·chunks = " +
                 N(s.pp * s.chunks) + " equal chunks; allowed: layers divisible by pp·chunks");
    }
    if (s.microbatches % s.pp != 0) {
      return bad("--schedule=interleaved: --microbatches = " + N(s.microbatches) + " is not a multiple of --pp = " +
                 N(s.pp) + "; allowed: a multiple of pp (Megatron's rule)");
    }
  }
  if (s.global_batch != 0 && s.global_batch != s.microbatch_size * s.microbatches * s.dp) {
    return bad("--global-batch = " + N(s.global_batch) + " is not microbatch-size·microbatches·dp = " +
               N(s.microbatch_size) + "·" + N(s.microbatches) + "·" + N(s.dp) + " = " +
               N(s.microbatch_size * s.microbatches * s.dp) + "; allowed: a multiple of microbatch-size·dp");
  }
  return Status::Ok();
}

Result<Workload> GenerateDense(const ModelDesc& m, const Strategy& s) {
  ORRERY_RETURN_IF_ERROR(ValidateStrategy(m, s));
  Workload w;
  w.layout = Layout({s.tp, s.cp, s.ep, s.dp, s.pp}, s.order);
  for (int64_t k = 0; k < s.pp; ++k) w.classes.push_back(StageGen(m, s, k).Run());
  w.class_of_rank.resize(w.layout.npus());
  for (int64_t r = 0; r < w.layout.npus(); ++r) w.class_of_rank[r] = static_cast<int>(w.layout.Coord(r, Axis::kPp));
  return w;
}

}  // namespace orrery::gen
