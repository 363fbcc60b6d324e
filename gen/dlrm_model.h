// The DLRM model description (Naumov et al. 2019): its preset, exact
// parameter count, interaction widths and strict YAML reader (`kind: dlrm`).
// Formulas and sources: docs/generator.md, "DLRM".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gen/model.h"

namespace YAML {
class Node;
}

namespace orrery::gen {

// Vectors entering the interaction: the bottom-MLP output and one pooled
// embedding per table, T' = tables + 1.
int64_t DlrmVectors(const DlrmDesc& d);
// Pairs the dot interaction forms per sample: T'(T'−1)/2, with the self term
// T'(T'+1)/2; 0 for cat.
int64_t DlrmPairs(const DlrmDesc& d);
// Input width of the top MLP: bottom output + pairs (dot, dot-self; the
// reference concatenates the bottom output with the dot products), bottom
// output + tables·d (cat).
int64_t DlrmTopInput(const DlrmDesc& d);
// Parameters of an MLP with input width `in` and layer sizes `sizes`:
// Σ in·out + out (weights and biases).
int64_t MlpParams(int64_t in, const std::vector<int64_t>& sizes);
int64_t DlrmEmbeddingParams(const DlrmDesc& d);  // Σ rows·d
int64_t DlrmMlpParams(const DlrmDesc& d);        // bottom + top MLP
int64_t DlrmParamCount(const DlrmDesc& d);       // embeddings + MLPs
// Lookups per sample over all tables: Σ pooling.
int64_t DlrmLookupsPerSample(const DlrmDesc& d);

const char* InteractionName(Interaction i);
// "DLRM, 26 tables x d 128 (187767399 rows), 13 dense features, bottom MLP
// 13-512-256-128, top MLP 479-1024-1024-512-256-1, dot interaction".
std::string DescribeDlrm(const DlrmDesc& d);

// The MLPerf Training DLRM on Criteo 1TB (docs/generator.md gives the source).
ModelDesc DlrmMlperfPreset();

// Checks the shape: dot interaction needs bottom MLP output == d; sizes small
// enough that every count fits 64 bits.
Status ValidateDlrm(const DlrmDesc& d, const std::string& where);
// Reads a `kind: dlrm` model file (root: its YAML mapping). Every key checked;
// errors name file:line: key.
Result<ModelDesc> ReadDlrmYaml(const YAML::Node& root, const std::string& path);

}  // namespace orrery::gen
