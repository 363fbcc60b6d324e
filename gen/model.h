// A model description for the workload generator (a decoder transformer, or a
// DLRM recommendation model), its built-in presets (published shapes) and a
// strict YAML reader.
// Formulas and sources: docs/generator.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace orrery::gen {

enum class ModelKind { kTransformer, kDlrm };

// Parameters of a model, and of each of its weight matrices, at most: 2^44
// (17.6 T, 17 times a 1 T model), so 16 bytes of model state per parameter
// stay within a message's 2^48 bytes (core/limits.h kMaxBytes).
inline constexpr int64_t kMaxModelParams = int64_t{1} << 44;

// DLRM interaction of the bottom-MLP output with the pooled embeddings
// (Naumov et al. 2019 §2.1.3): pairwise dot products without or with the
// self term (dlrm_s_pytorch.py's arch_interaction_itself), or concatenation.
enum class Interaction { kDot, kDotSelf, kCat };

// A DLRM (Naumov et al. 2019): embedding tables of a common dimension d, a
// bottom MLP over the dense features, a feature interaction, a top MLP.
// Formulas and the YAML form: docs/generator.md, "DLRM".
struct DlrmDesc {
  std::vector<int64_t> table_rows;  // rows of each table
  std::vector<int64_t> pooling;     // lookups per sample per table (one per table)
  int64_t embedding_dim = 0;        // d
  int64_t dense_features = 0;       // input width of the bottom MLP
  std::vector<int64_t> bottom_mlp;  // output sizes of the bottom MLP layers
  std::vector<int64_t> top_mlp;     // output sizes of the top MLP layers
  Interaction interaction = Interaction::kDot;
};

struct ModelDesc {
  ModelKind kind = ModelKind::kTransformer;
  DlrmDesc dlrm;  // kind == kDlrm only; the transformer fields below are then unused
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;             // h
  int64_t ffn = 0;                // FFN inner size (4h for GPT)
  int64_t heads = 0;              // attention (query) heads a
  int64_t kv_heads = 0;           // K/V heads (== heads: MHA; < heads: GQA; 1: MQA)
  int64_t head_dim = 0;           // hidden / heads unless stated
  int64_t vocab = 0;              // V
  int64_t seq_len = 0;            // s
  bool gated_ffn = false;         // SwiGLU: three FFN matrices instead of two
  bool tied_embeddings = true;    // output layer shares the input embedding
  bool biases = true;             // GEMM biases (GPT: yes; Llama: no)
  bool rms_norm = false;          // RMSNorm (h params) instead of LayerNorm (2h)
  bool learned_positions = true;  // s·h position embedding (GPT); false for RoPE
  // MoE (experts == 0: dense).
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t shared_experts = 0;
  int64_t moe_layer_freq = 1;  // every n-th layer is MoE
  int64_t expert_ffn = 0;      // FFN inner size of one expert
  std::string source;          // where the shape is published
};

// Parameters of one transformer layer (attention, FFN or experts, norms, biases).
int64_t LayerParams(const ModelDesc& m, int64_t layer);
// Layer `layer` (0-based) is a MoE layer: experts > 0 and (layer + 1) is a
// multiple of moe_layer_freq.
bool IsMoeLayer(const ModelDesc& m, int64_t layer);
// The routed experts' parameters of a layer (sharded by EP; 0 for a dense
// layer). Router and shared experts are dense parameters.
int64_t ExpertParams(const ModelDesc& m, int64_t layer);
// Exact parameter count from the shape: embeddings (V·h; twice when untied;
// plus s·h learned positions), every layer, the final norm. DLRM: see
// DlrmParamCount (gen/dlrm_model.h).
int64_t ParamCount(const ModelDesc& m);
// Narayanan et al. 2021 eq. 2, the closed form for GPT models:
// P = 12·l·h² + 13·l·h + (V+s)·h  (= 12lh²(1 + 13/(12h) + (V+s)/(12lh))).
int64_t NarayananParams(const ModelDesc& m);

// The built-in presets, in listing order.
const std::vector<ModelDesc>& Presets();
// A preset by name, or the YAML file at `name_or_path` when it is not one.
Result<ModelDesc> LoadModel(const std::string& name_or_path);
// Strict YAML reader: unknown keys, wrong types and out-of-range numbers are
// errors naming file:line: key.
Result<ModelDesc> ReadModelYaml(const std::string& path);
// Checks the shape is consistent (hidden == heads·head_dim for dense attention
// is not required, but heads % kv_heads == 0 is, ...).
Status ValidateModel(const ModelDesc& m, const std::string& where);

}  // namespace orrery::gen
