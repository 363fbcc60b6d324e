#include "gen/model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <map>

#include "core/limits.h"
#include "core/parse.h"
#include "extern/json_util.h"
#include "extern/yaml_map.h"
#include "gen/dlrm_model.h"

namespace orrery::gen {
namespace {

ModelDesc Gpt(const std::string& name, int64_t l, int64_t h, int64_t a, const std::string& source) {
  ModelDesc m;
  m.name = name;
  m.layers = l;
  m.hidden = h;
  m.ffn = 4 * h;
  m.heads = a;
  m.kv_heads = a;
  m.head_dim = h / a;
  m.vocab = 51200;
  m.seq_len = 2048;
  m.source = source;
  return m;
}

ModelDesc Llama(const std::string& name, int64_t l, int64_t h, int64_t f, int64_t a, int64_t kv,
                const std::string& source) {
  ModelDesc m;
  m.name = name;
  m.layers = l;
  m.hidden = h;
  m.ffn = f;
  m.heads = a;
  m.kv_heads = kv;
  m.head_dim = h / a;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.gated_ffn = true;
  m.tied_embeddings = false;
  m.biases = false;
  m.rms_norm = true;
  m.learned_positions = false;
  m.source = source;
  return m;
}

std::vector<ModelDesc> MakePresets() {
  const std::string kK = "Korthikanti et al. 2022, Table 3";
  std::vector<ModelDesc> p;
  p.push_back(Gpt("gpt3-175b", 96, 12288, 96, "Brown et al. 2020, Table 2.1; Narayanan et al. 2021"));
  p.push_back(Gpt("megatron-22b", 48, 6144, 64, kK));
  p.push_back(Gpt("megatron-530b", 105, 20480, 128, kK));
  p.push_back(Gpt("megatron-1t", 128, 25600, 160, kK));
  const std::string kL = "Llama 3 Herd of Models (Dubey et al. 2024), Table 3";
  p.push_back(Llama("llama3-8b", 32, 4096, 14336, 32, 8, kL));
  p.push_back(Llama("llama3-70b", 80, 8192, 28672, 64, 8, kL));
  p.push_back(Llama("llama3-405b", 126, 16384, 53248, 128, 8, kL));
  ModelDesc mx = Llama("mixtral-8x7b", 32, 4096, 14336, 32, 8, "Jiang et al. 2024 (Mixtral of Experts), Table 1");
  mx.vocab = 32000;
  mx.seq_len = 32768;
  mx.experts = 8;
  mx.top_k = 2;
  mx.expert_ffn = 14336;
  p.push_back(mx);
  p.push_back(DlrmMlperfPreset());
  return p;
}

}  // namespace

namespace {
int64_t FfnParams(const ModelDesc& m, int64_t f) {
  int64_t n = (m.gated_ffn ? 3 : 2) * m.hidden * f;
  if (m.biases) n += (m.gated_ffn ? 2 * f : f) + m.hidden;
  return n;
}
}  // namespace

bool IsMoeLayer(const ModelDesc& m, int64_t layer) { return m.experts > 0 && (layer + 1) % m.moe_layer_freq == 0; }

int64_t ExpertParams(const ModelDesc& m, int64_t layer) {
  return IsMoeLayer(m, layer) ? m.experts * FfnParams(m, m.expert_ffn) : 0;
}

int64_t LayerParams(const ModelDesc& m, int64_t layer) {
  const int64_t h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  int64_t p = h * q + 2 * h * kv + q * h;  // Q, K, V, output projection
  if (m.biases) p += q + 2 * kv + h;
  auto ffn = [&](int64_t f) { return FfnParams(m, f); };
  const bool moe = IsMoeLayer(m, layer);
  if (moe) {
    p += (m.experts + m.shared_experts) * ffn(m.expert_ffn) + h * m.experts;  // experts + router
  } else {
    p += ffn(m.ffn);
  }
  p += (m.rms_norm ? 1 : 2) * h * 2;  // two norms
  return p;
}

int64_t ParamCount(const ModelDesc& m) {
  if (m.kind == ModelKind::kDlrm) return DlrmParamCount(m.dlrm);
  int64_t p = m.vocab * m.hidden * (m.tied_embeddings ? 1 : 2);
  if (m.learned_positions) p += m.seq_len * m.hidden;
  for (int64_t i = 0; i < m.layers; ++i) p += LayerParams(m, i);
  p += (m.rms_norm ? 1 : 2) * m.hidden;  // final norm
  return p;
}

int64_t NarayananParams(const ModelDesc& m) {
  const int64_t l = m.layers, h = m.hidden;
  return 12 * l * h * h + 13 * l * h + (m.vocab + m.seq_len) * h;
}

const std::vector<ModelDesc>& Presets() {
  static const std::vector<ModelDesc> presets = MakePresets();
  return presets;
}

Status ValidateModel(const ModelDesc& m, const std::string& where) {
  auto bad = [&](const std::string& what) { return Status::Invalid(where + ": " + what); };
  if (m.heads % m.kv_heads != 0) {
    return bad("heads = " + std::to_string(m.heads) + " is not a multiple of kv_heads = " + std::to_string(m.kv_heads) +
               "; allowed: kv_heads dividing heads (GQA groups)");
  }
  if (m.experts > 0) {
    if (m.top_k < 1 || m.top_k > m.experts) {
      return bad("top_k = " + std::to_string(m.top_k) + "; allowed: 1.." + std::to_string(m.experts) +
                 " (the number of experts)");
    }
    if (m.expert_ffn < 1) return bad("expert_ffn is required with experts > 0");
  } else if (m.top_k != 0 || m.shared_experts != 0) {
    return bad("top_k / shared_experts given without experts");
  }
  return Status::Ok();
}

namespace {

Result<YAML::Node> LoadModelFile(const std::string& path) {
  return LoadYamlMapping(path, {"cannot read the model file (not a preset either; see --list-models)",
                                "YAML syntax error", "a model file is a mapping of keys, e.g. 'layers: 32'"});
}

// `kind`: transformer (the default) or dlrm.
Result<bool> IsDlrm(const YAML::Node& root, const std::string& path) {
  const YAML::Node kind = root["kind"];
  if (!kind) return false;
  const Where where{path, kind.Mark().line + 1, "kind"};
  const std::string text = kind.IsScalar() ? kind.Scalar() : "(not a scalar)";
  if (text == "dlrm") return true;
  if (text == "transformer") return false;
  const std::string close = ClosestMatch(text, {"transformer", "dlrm"});
  return ValueError(where, text,
                    close.empty() ? "unknown model kind" : "unknown model kind (did you mean '" + close + "'?)",
                    "transformer (the default) or dlrm");
}

// The keys whose default follows from others: which the file gave; and the
// line of every key given (for the size checks' messages).
struct GivenKeys {
  bool head_dim = false, kv_heads = false, ffn = false;
  std::map<std::string, int> lines;
};

// Each dimension's range: many times any published model (hidden 25,600,
// vocab 256,000, a million tokens, 256 experts), and small enough that the
// products the generator forms stay checked (CheckModelSizes).
constexpr int64_t kMaxModelLayers = int64_t{1} << 16;
constexpr int64_t kMaxModelWidth = int64_t{1} << 24;  // hidden, ffn, expert_ffn, vocab, seq_len, heads·head_dim
constexpr int64_t kMaxModelCount = int64_t{1} << 16;  // heads, kv_heads, head_dim, experts, top_k, ...

Status ReadTransformerKeys(const YAML::Node& root, const std::string& path, ModelDesc* m, GivenKeys* given) {
  struct IntKey {
    int64_t* field;
    int64_t min, max;
    bool* set;
  };
  const int64_t kW = kMaxModelWidth, kC = kMaxModelCount;
  std::map<std::string, IntKey> ints = {{"layers", {&m->layers, 1, kMaxModelLayers, nullptr}},
                                        {"hidden", {&m->hidden, 1, kW, nullptr}},
                                        {"ffn", {&m->ffn, 1, kW, &given->ffn}},
                                        {"heads", {&m->heads, 1, kC, nullptr}},
                                        {"kv_heads", {&m->kv_heads, 1, kC, &given->kv_heads}},
                                        {"head_dim", {&m->head_dim, 1, kC, &given->head_dim}},
                                        {"vocab", {&m->vocab, 1, kW, nullptr}},
                                        {"seq_len", {&m->seq_len, 1, kW, nullptr}},
                                        {"experts", {&m->experts, 0, kC, nullptr}},
                                        {"top_k", {&m->top_k, 0, kC, nullptr}},
                                        {"shared_experts", {&m->shared_experts, 0, kC, nullptr}},
                                        {"moe_layer_freq", {&m->moe_layer_freq, 1, kMaxModelLayers, nullptr}},
                                        {"expert_ffn", {&m->expert_ffn, 1, kW, nullptr}}};
  std::map<std::string, bool*> bools = {{"gated_ffn", &m->gated_ffn},
                                        {"tied_embeddings", &m->tied_embeddings},
                                        {"biases", &m->biases},
                                        {"rms_norm", &m->rms_norm},
                                        {"learned_positions", &m->learned_positions}};
  std::vector<std::string> valid = {"kind", "name"};
  for (const auto& [k, v] : ints) valid.push_back(k);
  for (const auto& [k, v] : bools) valid.push_back(k);
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(root, path, ""));
  for (const YamlEntry& e : entries) {
    const std::string& key = e.key;
    const Where where{path, e.line, key};
    const YAML::Node v = e.value;
    if (!v.IsScalar()) return ValueError(where, "(not a scalar)", "wrong type", "a single value");
    const std::string text = v.Scalar();
    given->lines[key] = e.line;
    if (key == "kind") {
      continue;  // "transformer", checked before
    } else if (key == "name") {
      m->name = text;
    } else if (auto i = ints.find(key); i != ints.end()) {
      ORRERY_PARSE_OR_RETURN(*i->second.field, ParseInt(text, where, i->second.min, i->second.max));
      if (i->second.set) *i->second.set = true;
    } else if (auto b = bools.find(key); b != bools.end()) {
      if (text != "true" && text != "false") return ValueError(where, text, "not a boolean", "true or false");
      *b->second = text == "true";
    } else {
      return Status::Invalid(where.Describe() + ": " + UnknownKeyMessage(key, valid));
    }
  }
  return Status::Ok();
}

// The products the generator forms from the dimensions, each checked before
// it is formed: the attention widths, every weight matrix and the
// parameters of all layers within kMaxModelParams. A message names the file,
// the line of the key that passed the limit, the keys and their values.
Status CheckModelSizes(const ModelDesc& m, const std::string& path, const GivenKeys& given) {
  // A factor and the line of its key (of `line_key`, for a derived one: ffn's default 4·hidden).
  auto f = [&](const char* key, int64_t value, const char* line_key = nullptr) {
    auto it = given.lines.find(key);
    if (it == given.lines.end() && line_key) it = given.lines.find(line_key);
    return Factor{key, value, it == given.lines.end() ? 0 : it->second};
  };
  const Where at{path, 0, ""};
  const std::string width = "at most " + std::to_string(kMaxModelWidth) + " (2^24)";
  const std::string params = "at most " + std::to_string(kMaxModelParams) + " parameters (2^44)";
  const int64_t mats = m.gated_ffn ? 3 : 2;
  ORRERY_RETURN_IF_ERROR(
      CheckedProduct({f("heads", m.heads), f("head_dim", m.head_dim)}, kMaxModelWidth, at, width).status());
  ORRERY_RETURN_IF_ERROR(
      CheckedProduct({f("kv_heads", m.kv_heads), f("head_dim", m.head_dim)}, kMaxModelWidth, at, width).status());
  ORRERY_RETURN_IF_ERROR(
      CheckedProduct({f("vocab", m.vocab), f("hidden", m.hidden)}, kMaxModelParams, at, params).status());
  ORRERY_RETURN_IF_ERROR(
      CheckedProduct({f("seq_len", m.seq_len), f("hidden", m.hidden)}, kMaxModelParams, at, params).status());
  ORRERY_RETURN_IF_ERROR(CheckedProduct({f("hidden", m.hidden), f("ffn", m.ffn, "hidden"), {"matrices", mats}},
                                        kMaxModelParams, at, params)
                             .status());
  if (m.experts > 0) {
    ORRERY_RETURN_IF_ERROR(CheckedProduct({f("experts+shared_experts", m.experts + m.shared_experts, "experts"),
                                           f("hidden", m.hidden),
                                           f("expert_ffn", m.expert_ffn),
                                           {"matrices", mats}},
                                          kMaxModelParams, at, params)
                               .status());
  }
  // Each term of a layer is now within 2^44 (the attention's within 2^50): their sum fits.
  int64_t per_layer = 0;
  for (int64_t j = 0; j < std::min(m.layers, m.moe_layer_freq); ++j) per_layer = std::max(per_layer, LayerParams(m, j));
  const Factor layers = f("layers", m.layers);
  return CheckedProduct({layers, {"parameters per layer", per_layer, layers.line}}, kMaxModelParams, at, params)
      .status();
}

// The required keys, then the defaults that follow from the others.
Status CompleteTransformer(const YAML::Node& root, const std::string& path, const GivenKeys& given, ModelDesc* m) {
  for (const char* req : {"layers", "hidden", "heads", "vocab", "seq_len"}) {
    if (!root[req]) return Status::Invalid(path + ": missing required key '" + req + "'");
  }
  if (!given.kv_heads) m->kv_heads = m->heads;
  if (!given.ffn) m->ffn = 4 * m->hidden;
  if (!given.head_dim) {
    if (m->hidden % m->heads != 0) {
      return ValueError(Where{path, 0, "heads"}, std::to_string(m->heads),
                        "does not divide hidden = " + std::to_string(m->hidden),
                        "a divisor of hidden, or an explicit head_dim");
    }
    m->head_dim = m->hidden / m->heads;
  }
  return Status::Ok();
}

}  // namespace

Result<ModelDesc> ReadModelYaml(const std::string& path) {
  YAML::Node root;
  ORRERY_PARSE_OR_RETURN(root, LoadModelFile(path));
  bool dlrm = false;
  ORRERY_PARSE_OR_RETURN(dlrm, IsDlrm(root, path));
  if (dlrm) return ReadDlrmYaml(root, path);
  ModelDesc m;
  m.name = path;
  m.source = path;
  GivenKeys given;
  ORRERY_RETURN_IF_ERROR(ReadTransformerKeys(root, path, &m, &given));
  ORRERY_RETURN_IF_ERROR(CompleteTransformer(root, path, given, &m));
  if (Status st = ValidateModel(m, path); !st.ok()) return st;
  ORRERY_RETURN_IF_ERROR(CheckModelSizes(m, path, given));
  return m;
}

Result<ModelDesc> LoadModel(const std::string& name_or_path) {
  for (const ModelDesc& m : Presets()) {
    if (m.name == name_or_path) return m;
  }
  const bool looks_like_file = name_or_path.find('/') != std::string::npos ||
                               name_or_path.find(".y") != std::string::npos;
  if (!looks_like_file) {
    std::vector<std::string> names;
    for (const ModelDesc& m : Presets()) names.push_back(m.name);
    const std::string close = ClosestMatch(name_or_path, names);
    return Status::Invalid("--model = \"" + name_or_path + "\": not a preset" +
                           (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                           "; allowed: a YAML file path or one of " + JoinStrings(names, ", "));
  }
  return ReadModelYaml(name_or_path);
}

}  // namespace orrery::gen
