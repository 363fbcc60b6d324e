#include "gen/dlrm_model.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "core/parse.h"
#include "extern/json_util.h"
#include "extern/yaml_map.h"

namespace orrery::gen {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

std::string Dashed(int64_t first, const std::vector<int64_t>& sizes) {
  std::string s = N(first);
  for (int64_t v : sizes) s.append("-").append(N(v));
  return s;
}

// Limits that keep every per-node count of the generator inside 64 bits
// (checked again, in 128 bits, by the strategy for the batch it is given).
constexpr int64_t kMaxRows = int64_t{1} << 40;
constexpr int64_t kMaxTables = 1 << 16;
constexpr int64_t kMaxDim = 1 << 16;
constexpr int64_t kMaxPooling = 1 << 16;
constexpr int64_t kMaxWidth = 1 << 24;
constexpr int64_t kMaxLayers = 1 << 10;

int Line(const YAML::Node& n) { return n.Mark().line + 1; }

// A YAML sequence of integers in [min, max]: "tables[3]" names an element.
Result<std::vector<int64_t>> IntList(const YAML::Node& v, const Where& where, int64_t min, int64_t max,
                                     int64_t max_items, const std::string& allowed) {
  if (!v.IsSequence() || v.size() == 0)
    return ValueError(where, v.IsScalar() ? v.Scalar() : "(not a list)", "not a non-empty list", allowed);
  if (static_cast<int64_t>(v.size()) > max_items) {
    return ValueError(where, "(" + N(static_cast<int64_t>(v.size())) + " items)", "too many items",
                      "at most " + N(max_items));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const Where at{where.file, Line(v[i]), where.key + "[" + std::to_string(i) + "]"};
    if (!v[i].IsScalar()) return ValueError(at, "(not a scalar)", "wrong type", "an integer");
    int64_t x;
    ORRERY_PARSE_OR_RETURN(x, ParseInt(v[i].Scalar(), at, min, max));
    out.push_back(x);
  }
  return out;
}

// `tables:` either a list of row counts or {count: N, rows: R}.
Result<std::vector<int64_t>> ReadTables(const YAML::Node& v, const Where& where) {
  const std::string allowed = "a list of row counts, e.g. [1000, 40000000], or {count: N, rows: R} for N equal tables";
  if (v.IsSequence()) return IntList(v, where, 1, kMaxRows, kMaxTables, allowed);
  if (!v.IsMap()) return ValueError(where, v.IsScalar() ? v.Scalar() : "(not a list)", "wrong form", allowed);
  int64_t count = 0, rows = 0;
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(v, where.file, where.key));
  for (const YamlEntry& e : entries) {
    const std::string& key = e.key;
    const Where at{where.file, e.line, where.key + "." + key};
    if (!e.value.IsScalar()) return ValueError(at, "(not a scalar)", "wrong type", "an integer");
    if (key == "count") {
      ORRERY_PARSE_OR_RETURN(count, ParseInt(e.value.Scalar(), at, 1, kMaxTables));
    } else if (key == "rows") {
      ORRERY_PARSE_OR_RETURN(rows, ParseInt(e.value.Scalar(), at, 1, kMaxRows));
    } else {
      return Status::Invalid(at.Describe() + ": " + UnknownKeyMessage(key, {"count", "rows"}));
    }
  }
  if (count == 0 || rows == 0) return ValueError(where, "{...}", "needs both count and rows", allowed);
  return std::vector<int64_t>(static_cast<size_t>(count), rows);
}

}  // namespace

int64_t DlrmVectors(const DlrmDesc& d) { return static_cast<int64_t>(d.table_rows.size()) + 1; }

int64_t DlrmPairs(const DlrmDesc& d) {
  const int64_t v = DlrmVectors(d);
  switch (d.interaction) {
    case Interaction::kDot: return v * (v - 1) / 2;
    case Interaction::kDotSelf: return v * (v + 1) / 2;
    case Interaction::kCat: return 0;
  }
  return 0;
}

int64_t DlrmTopInput(const DlrmDesc& d) {
  const int64_t bottom = d.bottom_mlp.empty() ? d.dense_features : d.bottom_mlp.back();
  if (d.interaction == Interaction::kCat) {
    return bottom + static_cast<int64_t>(d.table_rows.size()) * d.embedding_dim;
  }
  return bottom + DlrmPairs(d);
}

int64_t MlpParams(int64_t in, const std::vector<int64_t>& sizes) {
  int64_t p = 0;
  for (int64_t out : sizes) {
    p += in * out + out;
    in = out;
  }
  return p;
}

int64_t DlrmEmbeddingParams(const DlrmDesc& d) {
  int64_t p = 0;
  for (int64_t rows : d.table_rows) p += rows * d.embedding_dim;
  return p;
}

int64_t DlrmMlpParams(const DlrmDesc& d) {
  return MlpParams(d.dense_features, d.bottom_mlp) + MlpParams(DlrmTopInput(d), d.top_mlp);
}

int64_t DlrmParamCount(const DlrmDesc& d) { return DlrmEmbeddingParams(d) + DlrmMlpParams(d); }

int64_t DlrmLookupsPerSample(const DlrmDesc& d) {
  int64_t n = 0;
  for (int64_t l : d.pooling) n += l;
  return n;
}

const char* InteractionName(Interaction i) {
  switch (i) {
    case Interaction::kDot: return "dot";
    case Interaction::kDotSelf: return "dot-self";
    case Interaction::kCat: return "cat";
  }
  return "?";
}

std::string DescribeDlrm(const DlrmDesc& d) {
  int64_t rows = 0;
  for (int64_t r : d.table_rows) rows += r;
  return "DLRM, " + N(static_cast<int64_t>(d.table_rows.size())) + " tables x d " + N(d.embedding_dim) + " (" +
         N(rows) + " rows, " + N(DlrmLookupsPerSample(d)) + " lookups per sample), " + N(d.dense_features) +
         " dense features, bottom MLP " + Dashed(d.dense_features, d.bottom_mlp) + ", top MLP " +
         Dashed(DlrmTopInput(d), d.top_mlp) + ", " + InteractionName(d.interaction) + " interaction";
}

ModelDesc DlrmMlperfPreset() {
  ModelDesc m;
  m.kind = ModelKind::kDlrm;
  m.name = "dlrm-mlperf";
  // Rows of the 26 Criteo 1TB tables after MLPerf's --max-ind-range=40000000
  // (facebookresearch/dlrm, the MLPerf Training reference; docs/generator.md).
  m.dlrm.table_rows = {39884406, 39043,    17289,    7420,     20263,  3,     7120, 1543, 63,
                       38532951, 2953546,  403346,   10,       2208,   11938, 155,  4,    976,
                       14,       39979771, 25641295, 39664984, 585935, 12972, 108,  36};
  m.dlrm.pooling.assign(m.dlrm.table_rows.size(), 1);  // one-hot Criteo features
  m.dlrm.embedding_dim = 128;
  m.dlrm.dense_features = 13;
  m.dlrm.bottom_mlp = {512, 256, 128};
  m.dlrm.top_mlp = {1024, 1024, 512, 256, 1};
  m.dlrm.interaction = Interaction::kDot;
  m.source = "MLPerf Training DLRM reference (facebookresearch/dlrm), Criteo 1TB, --max-ind-range=40000000";
  return m;
}

Status ValidateDlrm(const DlrmDesc& d, const std::string& where) {
  auto bad = [&](const std::string& what) { return Status::Invalid(where + ": " + what); };
  if (d.table_rows.empty()) return bad("a DLRM needs at least one embedding table");
  if (d.pooling.size() != d.table_rows.size()) {
    return bad("pooling has " + N(static_cast<int64_t>(d.pooling.size())) + " entries for " +
               N(static_cast<int64_t>(d.table_rows.size())) +
               " tables; allowed: one number for all tables, or one per table");
  }
  if (d.bottom_mlp.empty() || d.top_mlp.empty()) return bad("bottom_mlp and top_mlp need at least one layer each");
  if (d.interaction != Interaction::kCat && d.bottom_mlp.back() != d.embedding_dim) {
    return bad("bottom_mlp ends in " + N(d.bottom_mlp.back()) + " but embedding_dim = " + N(d.embedding_dim) +
               "; allowed: with interaction " + InteractionName(d.interaction) +
               " the last bottom MLP layer equals embedding_dim (its output is dotted with the embeddings), or "
               "interaction cat");
  }
  // Every count the generator forms per sample fits comfortably in 64 bits
  // (the strategy checks the products with the batch).
  unsigned __int128 emb = 0;
  for (int64_t r : d.table_rows) emb += static_cast<unsigned __int128>(r) * static_cast<uint64_t>(d.embedding_dim);
  if (emb > (static_cast<unsigned __int128>(1) << 56)) {
    return bad("the embedding tables hold more than 2^56 values; allowed: fewer rows or a smaller embedding_dim");
  }
  return Status::Ok();
}

namespace {

Result<Interaction> ParseInteraction(const std::string& t, const Where& where) {
  if (t == "dot") return Interaction::kDot;
  if (t == "dot-self") return Interaction::kDotSelf;
  if (t == "cat") return Interaction::kCat;
  const std::string close = ClosestMatch(t, {"dot", "dot-self", "cat"});
  return ValueError(
      where, t, close.empty() ? "unknown interaction" : "unknown interaction (did you mean '" + close + "'?)",
      "dot (pairwise dot products), dot-self (with each vector's dot with itself) or cat (concatenation)");
}

// The pooling key as written: read once the tables are known.
struct PoolingKey {
  YAML::Node node;
  bool set = false;
  Where where;
};

Status ReadDlrmKeys(const YAML::Node& root, const std::string& path, ModelDesc* m, PoolingKey* pooling) {
  DlrmDesc& d = m->dlrm;
  const std::vector<std::string> valid = {"kind",    "name",       "embedding_dim", "dense_features", "tables",
                                          "pooling", "bottom_mlp", "top_mlp",       "interaction"};
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(root, path, ""));
  for (const YamlEntry& e : entries) {
    const std::string& key = e.key;
    const Where where{path, e.line, key};
    const YAML::Node v = e.value;
    const bool scalar_key = key == "kind" || key == "name" || key == "embedding_dim" || key == "dense_features" ||
                            key == "interaction";
    if (scalar_key && !v.IsScalar()) return ValueError(where, "(not a scalar)", "wrong type", "a single value");
    if (key == "kind") {
      continue;  // "dlrm", checked by the caller
    } else if (key == "name") {
      m->name = v.Scalar();
    } else if (key == "embedding_dim") {
      ORRERY_PARSE_OR_RETURN(d.embedding_dim, ParseInt(v.Scalar(), where, 1, kMaxDim));
    } else if (key == "dense_features") {
      ORRERY_PARSE_OR_RETURN(d.dense_features, ParseInt(v.Scalar(), where, 1, kMaxWidth));
    } else if (key == "tables") {
      ORRERY_PARSE_OR_RETURN(d.table_rows, ReadTables(v, where));
    } else if (key == "pooling") {
      *pooling = PoolingKey{v, true, where};
    } else if (key == "bottom_mlp" || key == "top_mlp") {
      std::vector<int64_t>* layers = key == "bottom_mlp" ? &d.bottom_mlp : &d.top_mlp;
      ORRERY_PARSE_OR_RETURN(*layers, IntList(v, where, 1, kMaxWidth, kMaxLayers,
                                              "a list of layer output sizes, e.g. [512, 256, 128]"));
    } else if (key == "interaction") {
      ORRERY_PARSE_OR_RETURN(d.interaction, ParseInteraction(v.Scalar(), where));
    } else {
      return Status::Invalid(where.Describe() + ": " + UnknownKeyMessage(key, valid));
    }
  }
  return Status::Ok();
}

// pooling: one number for every table (default 1), or a list with one per table.
Status ReadPooling(const PoolingKey& pooling, DlrmDesc* d) {
  if (!pooling.set) {
    d->pooling.assign(d->table_rows.size(), 1);
  } else if (pooling.node.IsScalar()) {
    int64_t l;
    ORRERY_PARSE_OR_RETURN(l, ParseInt(pooling.node.Scalar(), pooling.where, 1, kMaxPooling));
    d->pooling.assign(d->table_rows.size(), l);
  } else {
    ORRERY_PARSE_OR_RETURN(d->pooling, IntList(pooling.node, pooling.where, 1, kMaxPooling, kMaxTables,
                                               "one number for every table, or a list with one per table"));
    if (d->pooling.size() != d->table_rows.size()) {
      return ValueError(pooling.where, "(" + N(static_cast<int64_t>(d->pooling.size())) + " entries)",
                        "not one per table (" + N(static_cast<int64_t>(d->table_rows.size())) + " tables)",
                        "one number for every table, or a list with one per table");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<ModelDesc> ReadDlrmYaml(const YAML::Node& root, const std::string& path) {
  ModelDesc m;
  m.kind = ModelKind::kDlrm;
  m.name = path;
  m.source = path;
  PoolingKey pooling;
  ORRERY_RETURN_IF_ERROR(ReadDlrmKeys(root, path, &m, &pooling));
  for (const char* req : {"embedding_dim", "dense_features", "tables", "bottom_mlp", "top_mlp"}) {
    if (!root[req]) return Status::Invalid(path + ": missing required key '" + req + "' (kind: dlrm)");
  }
  ORRERY_RETURN_IF_ERROR(ReadPooling(pooling, &m.dlrm));
  if (Status st = ValidateDlrm(m.dlrm, path); !st.ok()) return st;
  return m;
}

}  // namespace orrery::gen
