#include "gen/dlrm.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <queue>

#include "core/parse.h"
#include "core/units.h"
#include "gen/dlrm_model.h"
#include "gen/gen_args.h"
#include "gen/summary.h"

namespace orrery::gen {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

std::string Gb(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", BytesToGB(static_cast<double>(bytes)));
  return buf;
}

// Generates the graph of one rank class: the iteration of a rank that reads
// `lookups` embedding rows in the forward pass.
class DlrmGen {
 public:
  DlrmGen(const DlrmDesc& d, const DlrmStrategy& s, uint64_t lookups) : d_(d), s_(s), lookups_(lookups) {}

  GraphBuilder Run() {
    const uint64_t b = s_.local_batch, dim = d_.embedding_dim, v = s_.bytes_per_value;
    const uint64_t pairs = DlrmPairs(d_), top_in = DlrmTopInput(d_);
    const bool comm = s_.npus > 1, by_table = s_.sharding == EmbeddingSharding::kTable;
    // Forward: lookup, then the exchange of pooled embeddings while the bottom
    // MLP runs. A rank holding no table (table sharding) has no lookup node.
    std::vector<NodeRef> looked;
    if (lookups_ > 0) looked = {g_.Compute("fwd.emb_lookup", lookups_ * dim, lookups_ * dim * v, {})};
    std::vector<NodeRef> pooled;
    if (comm) {
      pooled = {by_table ? g_.Collective("fwd.emb_a2a", Coll::kAllToAll, DlrmPooledBytes(d_, s_), Axis::kDp, looked)
                         : g_.Collective("fwd.emb_rs", Coll::kReduceScatter, DlrmPooledBytes(d_, s_) * s_.npus,
                                         Axis::kDp, looked)};
    }
    std::vector<NodeRef> deps = looked;
    uint64_t in = d_.dense_features;
    for (size_t i = 0; i < d_.bottom_mlp.size(); ++i) {
      deps = {g_.Compute("fwd.bot_mlp" + N(i), 2 * b * in * d_.bottom_mlp[i], MlpBytes(in, d_.bottom_mlp[i]), deps)};
      in = d_.bottom_mlp[i];
    }
    deps.insert(deps.end(), pooled.begin(), pooled.end());
    const uint64_t inter_flops = b * pairs * 2 * dim;
    const uint64_t inter_bytes = b * (DlrmVectors(d_) * dim + top_in) * v;
    if (inter_flops > 0) deps = {g_.Compute("fwd.interaction", inter_flops, inter_bytes, deps)};
    in = top_in;
    for (size_t i = 0; i < d_.top_mlp.size(); ++i) {
      deps = {g_.Compute("fwd.top_mlp" + N(i), 2 * b * in * d_.top_mlp[i], MlpBytes(in, d_.top_mlp[i]), deps)};
      in = d_.top_mlp[i];
    }
    // Backward: top MLP, interaction, then the embedding gradients go back to
    // their owners while the bottom MLP's backward runs.
    for (size_t i = d_.top_mlp.size(); i-- > 0;) {
      const uint64_t layer_in = i == 0 ? top_in : d_.top_mlp[i - 1], out = d_.top_mlp[i];
      const NodeRef prev = g_.Compute("bwd.top_mlp" + N(i), 4 * b * layer_in * out, 2 * MlpBytes(layer_in, out), deps);
      deps = {prev};
      AddGrads((layer_in * out + out) * v, false, prev);
    }
    if (inter_flops > 0) deps = {g_.Compute("bwd.interaction", 2 * inter_flops, 2 * inter_bytes, deps)};
    std::vector<NodeRef> grads = deps;
    if (comm) {
      grads = {by_table ? g_.Collective("bwd.emb_a2a", Coll::kAllToAll, DlrmPooledBytes(d_, s_), Axis::kDp, deps)
                        : g_.Collective("bwd.emb_ag", Coll::kAllGather, DlrmPooledBytes(d_, s_), Axis::kDp, deps)};
    }
    for (size_t i = d_.bottom_mlp.size(); i-- > 0;) {
      const uint64_t layer_in = i == 0 ? d_.dense_features : d_.bottom_mlp[i - 1], out = d_.bottom_mlp[i];
      const NodeRef prev = g_.Compute("bwd.bot_mlp" + N(i), 4 * b * layer_in * out, 2 * MlpBytes(layer_in, out), deps);
      deps = {prev};
      AddGrads((layer_in * out + out) * v, i == 0, prev);
    }
    // The sparse update: every looked-up row read and written back.
    if (lookups_ > 0) g_.Compute("bwd.emb_update", 2 * lookups_ * dim, 2 * lookups_ * dim * v, grads);
    return std::move(g_);
  }

 private:
  // Weights and biases, input and output activations of one layer.
  uint64_t MlpBytes(uint64_t in, uint64_t out) const {
    return (in * out + out + s_.local_batch * (in + out)) * s_.bytes_per_value;
  }
  // MLP gradients, bucketed in backward order; a full bucket (or the last)
  // is all-reduced once the compute that finished it is done.
  void AddGrads(uint64_t bytes, bool flush, NodeRef after) {
    if (s_.npus <= 1) return;
    bucket_ += bytes;
    if (!flush && bucket_ < s_.bucket_bytes) return;
    g_.Collective("grad.bucket" + N(buckets_++) + ".dp_ar", Coll::kAllReduce, bucket_, Axis::kDp, {after});
    bucket_ = 0;
  }

  const DlrmDesc& d_;
  const DlrmStrategy& s_;
  uint64_t lookups_;
  GraphBuilder g_;
  uint64_t bucket_ = 0;
  int64_t buckets_ = 0;
};

// Ranks with equal lookup counts run the same graph: class ids by lowest rank.
std::vector<int> ClassOfRank(const std::vector<DlrmRankShare>& shares, std::vector<uint64_t>* class_lookups) {
  std::map<uint64_t, int> id;
  std::vector<int> out;
  for (const DlrmRankShare& r : shares) {
    auto [it, added] = id.emplace(r.lookups, static_cast<int>(id.size()));
    if (added) class_lookups->push_back(r.lookups);
    out.push_back(it->second);
  }
  return out;
}

std::string RankRanges(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += N(ranks[i]);
    if (j > i) s.append("-").append(N(ranks[j]));
    i = j + 1;
  }
  return s;
}

}  // namespace

const char* ShardingName(EmbeddingSharding s) { return s == EmbeddingSharding::kTable ? "table" : "row"; }

std::vector<int> AssignTables(const std::vector<int64_t>& rows, int64_t npus) {
  std::vector<int> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rows[a] > rows[b]; });
  // Min-heap of (rows held, rank): the top is the least loaded, lowest rank first.
  using Load = std::pair<int64_t, int64_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> heap;
  for (int64_t r = 0; r < npus; ++r) heap.push({0, r});
  std::vector<int> owner(rows.size(), 0);
  for (int t : order) {
    Load least = heap.top();
    heap.pop();
    owner[t] = static_cast<int>(least.second);
    least.first += rows[t];
    heap.push(least);
  }
  return owner;
}

std::vector<DlrmRankShare> ShareRanks(const DlrmDesc& d, const DlrmStrategy& s) {
  std::vector<DlrmRankShare> ranks(static_cast<size_t>(s.npus));
  const uint64_t n = s.npus, B = s.local_batch * n;
  if (s.sharding == EmbeddingSharding::kTable) {
    const std::vector<int> owner = AssignTables(d.table_rows, s.npus);
    for (size_t t = 0; t < owner.size(); ++t) {
      DlrmRankShare& r = ranks[owner[t]];
      r.tables.push_back(static_cast<int>(t));
      r.rows += d.table_rows[t];
      r.lookups += B * d.pooling[t];
    }
    return ranks;
  }
  for (uint64_t r = 0; r < n; ++r) {
    for (size_t t = 0; t < d.table_rows.size(); ++t) {
      const uint64_t rows = d.table_rows[t];
      ranks[r].rows += rows / n + (r < rows % n ? 1 : 0);
      ranks[r].lookups += s.local_batch * d.pooling[t];
    }
  }
  return ranks;
}

uint64_t DlrmPooledBytes(const DlrmDesc& d, const DlrmStrategy& s) {
  return s.local_batch * d.table_rows.size() * d.embedding_dim * s.bytes_per_value;
}

Flops DlrmClosedFormFlops(const DlrmDesc& d, int64_t global_batch) {
  const Flops B = global_batch, dim = d.embedding_dim;
  Flops gemm = 0;
  int64_t in = d.dense_features;
  for (int64_t out : d.bottom_mlp) gemm += static_cast<Flops>(in) * out, in = out;
  in = DlrmTopInput(d);
  for (int64_t out : d.top_mlp) gemm += static_cast<Flops>(in) * out, in = out;
  return 6 * B * gemm + 6 * B * static_cast<Flops>(DlrmPairs(d)) * dim + 3 * B * dim * DlrmLookupsPerSample(d);
}

DlrmMemory DlrmRankMemory(const DlrmDesc& d, const DlrmStrategy& s, const DlrmRankShare& share) {
  DlrmMemory m;
  const uint64_t v = s.bytes_per_value, b = s.local_batch, B = b * s.npus, dim = d.embedding_dim;
  m.embedding_bytes = share.rows * dim * v;
  m.mlp_state_bytes = ModelStateBytes(DlrmMlpParams(d), 0, 1);
  // Activations: every layer's output for the local batch (dense input, bottom
  // MLP, the T received pooled embeddings, the interaction output, top MLP),
  // plus the pooled embeddings the rank computed before the exchange.
  uint64_t widths = d.dense_features + d.table_rows.size() * dim + DlrmTopInput(d);
  for (int64_t w : d.bottom_mlp) widths += w;
  for (int64_t w : d.top_mlp) widths += w;
  const uint64_t computed_tables = s.sharding == EmbeddingSharding::kTable ? share.tables.size() : d.table_rows.size();
  m.activation_bytes = (b * widths + B * computed_tables * dim) * v;
  m.total_bytes = m.embedding_bytes + m.mlp_state_bytes + m.activation_bytes;
  return m;
}

Status CheckDlrmCapacity(const ModelDesc& m, const DlrmStrategy& s, uint64_t hbm_bytes) {
  const DlrmDesc& d = m.dlrm;
  const uint64_t dim = d.embedding_dim, v = s.bytes_per_value;
  if (s.sharding == EmbeddingSharding::kTable) {
    // The largest table (the first of equals) is the one to name.
    const size_t t = std::max_element(d.table_rows.begin(), d.table_rows.end()) - d.table_rows.begin();
    const uint64_t bytes = d.table_rows[t] * dim * v;
    if (bytes > hbm_bytes) {
      return Status::Invalid("--embedding-sharding=table: table " + N(static_cast<int64_t>(t)) + " of " + m.name +
                             ", the largest (" + N(d.table_rows[t]) + " rows x d " + N(d.embedding_dim) + " x " + N(v) +
                             " B = " + Gb(bytes) + "), is larger than one NPU's HBM (--hbm-gb capacity " +
                             Gb(hbm_bytes) +
                             "); allowed: --embedding-sharding=row, a larger --hbm-gb, or "
                             "--allow-over-capacity");
    }
  }
  const std::vector<DlrmRankShare> shares = ShareRanks(d, s);
  std::vector<uint64_t> class_lookups;
  const std::vector<int> class_of_rank = ClassOfRank(shares, &class_lookups);
  for (size_t r = 0; r < shares.size(); ++r) {
    const DlrmMemory f = DlrmRankMemory(d, s, shares[r]);
    if (f.total_bytes > hbm_bytes) {
      return Status::Invalid(
          "memory over capacity on rank " + N(static_cast<int64_t>(r)) + " (rank class " + N(class_of_rank[r]) +
          "): embeddings " + Gb(f.embedding_bytes) + " (" + N(shares[r].rows) + " rows, --embedding-sharding=" +
          ShardingName(s.sharding) + ") + MLP states " + Gb(f.mlp_state_bytes) + " + activations " +
          Gb(f.activation_bytes) + " = " + Gb(f.total_bytes) + " > --hbm-gb capacity " + Gb(hbm_bytes) +
          "; allowed: more --npus, --embedding-sharding=row, a smaller batch, or --allow-over-capacity");
    }
  }
  return Status::Ok();
}

Status ValidateDlrmStrategy(const ModelDesc& m, const DlrmStrategy& s) {
  if (m.kind != ModelKind::kDlrm) return Status::Invalid(m.name + " is not a DLRM model (kind: dlrm)");
  ORRERY_RETURN_IF_ERROR(ValidateDlrm(m.dlrm, m.name));
  // Every per-node count must fit 64 bits: the largest are the backward
  // lookup bytes (4·B·d·Σ pooling with 2-byte values), the row-sharded
  // reduce-scatter B·T·d·bytes and the backward MLP bytes.
  const DlrmDesc& d = m.dlrm;
  const Flops B = static_cast<Flops>(s.local_batch) * s.npus, dim = d.embedding_dim, v = s.bytes_per_value;
  Flops widest = 0;
  int64_t in = d.dense_features;
  for (int64_t out : d.bottom_mlp) widest = std::max<Flops>(widest, static_cast<Flops>(in + 1) * (out + 1)), in = out;
  in = DlrmTopInput(d);
  for (int64_t out : d.top_mlp) widest = std::max<Flops>(widest, static_cast<Flops>(in + 1) * (out + 1)), in = out;
  const Flops limit = static_cast<Flops>(1) << 62;
  if (2 * B * dim * v * DlrmLookupsPerSample(d) > limit || B * d.table_rows.size() * dim * v > limit ||
      4 * (B + 1) * widest * v > limit || 4 * B * DlrmPairs(d) * dim > limit) {
    return Status::Invalid("global batch " + N(static_cast<int64_t>(B)) + " on " + m.name +
                           ": a node's FLOPs or bytes exceed 2^62; allowed: a smaller --global-batch");
  }
  return Status::Ok();
}

Result<Workload> GenerateDlrm(const ModelDesc& m, const DlrmStrategy& s) {
  ORRERY_RETURN_IF_ERROR(ValidateDlrmStrategy(m, s));
  Workload w;
  w.layout = Layout({1, 1, 1, s.npus, 1}, {Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp});
  std::vector<uint64_t> class_lookups;
  w.class_of_rank = ClassOfRank(ShareRanks(m.dlrm, s), &class_lookups);
  for (uint64_t lookups : class_lookups) w.classes.push_back(DlrmGen(m.dlrm, s, lookups).Run());
  return w;
}

Result<DlrmStrategy> DlrmStrategyFromOptions(const GenOptions& o) {
  DlrmStrategy s;
  const Strategy& t = o.strategy;
  const bool npus_given = o.given.count("npus") > 0, dp_given = o.given.count("dp") > 0;
  if (npus_given && dp_given && t.npus != t.dp) {
    return Status::Invalid("--npus = " + N(t.npus) + " and --dp = " + N(t.dp) +
                           " differ; a DLRM runs data-parallel on every NPU: give one of them");
  }
  s.npus = npus_given ? t.npus : t.dp;
  if (o.given.count("global-batch")) {
    if (t.global_batch % s.npus != 0) {
      return Status::Invalid("--global-batch = " + N(t.global_batch) + " is not divisible by the " + N(s.npus) +
                             " NPUs; allowed: a multiple of the NPU count (each rank takes global-batch/NPUs samples)");
    }
    s.local_batch = t.global_batch / s.npus;
    if (o.given.count("microbatch-size") && t.microbatch_size != s.local_batch) {
      return Status::Invalid("--microbatch-size = " + N(t.microbatch_size) + " but --global-batch / NPUs = " +
                             N(s.local_batch) + "; allowed: one of them, or consistent values");
    }
  } else {
    s.local_batch = t.microbatch_size;
  }
  s.sharding = o.embedding_sharding;
  s.bucket_bytes = t.bucket_bytes;
  s.bytes_per_value = t.bytes_per_value;
  return s;
}

Result<DlrmGenerated> GenerateDlrmFromOptions(const ModelDesc& m, const GenOptions& o) {
  DlrmGenerated g;
  ORRERY_PARSE_OR_RETURN(g.strategy, DlrmStrategyFromOptions(o));
  ORRERY_RETURN_IF_ERROR(ValidateDlrmStrategy(m, g.strategy));
  if (!o.allow_over_capacity) ORRERY_RETURN_IF_ERROR(CheckDlrmCapacity(m, g.strategy, o.hbm_bytes));
  ORRERY_PARSE_OR_RETURN(g.workload, GenerateDlrm(m, g.strategy));
  return g;
}

std::string FormatDlrmSummary(const ModelDesc& m, const DlrmStrategy& s, const Workload& w, uint64_t hbm_bytes) {
  const DlrmDesc& d = m.dlrm;
  std::string o;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", Billions(static_cast<double>(DlrmParamCount(d))));
  o += "model " + m.name + ": " + buf + " B parameters (embeddings " + N(DlrmEmbeddingParams(d)) + ", MLPs " +
       N(DlrmMlpParams(d)) + "); " + DescribeDlrm(d) + "\n";
  const int64_t B = s.local_batch * s.npus;
  o += "strategy: " + N(s.npus) + " NPUs, data-parallel MLPs, embeddings sharded by " + ShardingName(s.sharding) +
       (s.sharding == EmbeddingSharding::kTable ? " (greedy: largest table first, to the rank holding the fewest rows)"
                                                : " (every table's rows split over all ranks)") +
       "; local batch " + N(s.local_batch) + ", global batch " + N(B) + "\n";
  const std::vector<DlrmRankShare> shares = ShareRanks(d, s);
  if (s.sharding == EmbeddingSharding::kTable) {
    std::string held;
    int empty = 0;
    for (size_t r = 0; r < shares.size(); ++r) {
      if (shares[r].tables.empty()) {
        ++empty;
        continue;
      }
      std::string list;
      for (int t : shares[r].tables) list.append(list.empty() ? "" : ",").append(N(t));
      held.append(" ").append(N(static_cast<int64_t>(r))).append(":[").append(list).append("]");
    }
    o += "tables on ranks:" + held + (empty ? "; " + N(empty) + " ranks hold no table" : "") + "\n";
  }
  o += "exchange of pooled embeddings per rank: b·T·d·" + N(s.bytes_per_value) + " = " + N(DlrmPooledBytes(d, s)) +
       " B" +
       (s.sharding == EmbeddingSharding::kRow ? " (forward reduce-scatter of B·T·d·" + N(s.bytes_per_value) + " = " +
                                                    N(DlrmPooledBytes(d, s) * s.npus) + " B)"
                                              : "") +
       "\n";
  for (size_t c = 0; c < w.classes.size(); ++c) {
    std::vector<int> ranks;
    for (size_t r = 0; r < w.class_of_rank.size(); ++r) {
      if (w.class_of_rank[r] == static_cast<int>(c)) ranks.push_back(static_cast<int>(r));
    }
    const ClassTotals t = Totals(w.classes[c]);
    o.append("class ").append(N(static_cast<int64_t>(c)));
    o += ": ranks " + RankRanges(ranks) + " (" + N(static_cast<int64_t>(ranks.size())) + "), " +
         N(shares[ranks[0]].lookups) + " lookups, " + N(t.nodes) + " nodes, " + FlopsText(t.flops) +
         " FLOP per rank per iteration\n";
    for (const auto& [key, v] : t.comm) o += "  " + key + ": " + N(v.first) + " x, " + N(v.second) + " B\n";
    int worst = ranks[0];
    for (int r : ranks) {
      if (DlrmRankMemory(d, s, shares[r]).total_bytes > DlrmRankMemory(d, s, shares[worst]).total_bytes) worst = r;
    }
    const DlrmMemory f = DlrmRankMemory(d, s, shares[worst]);
    o += "  memory (rank " + N(worst) + ", the largest of the class): embeddings " + Gb(f.embedding_bytes) + " (" +
         N(shares[worst].rows) + " rows) + MLP states " + Gb(f.mlp_state_bytes) + " + activations " +
         Gb(f.activation_bytes) + " = " + Gb(f.total_bytes) + " of " + Gb(hbm_bytes) +
         (f.total_bytes > hbm_bytes ? "  OVER CAPACITY" : "") + "\n";
  }
  o += "FLOP per iteration, all ranks: " + FlopsText(TotalFlops(w)) +
       " (closed form 6B·Σ in·out + 6B·pairs·d + 3B·d·Σ pooling: " + FlopsText(DlrmClosedFormFlops(d, B)) + ")\n";
  return o;
}

}  // namespace orrery::gen
