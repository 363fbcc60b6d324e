// DLRM training as per-rank graphs (Naumov et al. 2019 §3, "Parallelism"):
// data-parallel MLPs, model-parallel embedding tables (whole tables per rank,
// or every table's rows split over all ranks), the pooled embeddings
// exchanged between the two, the MLP gradients all-reduced over all ranks.
// Every formula and its source: docs/generator.md, "DLRM".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"
#include "gen/builder.h"
#include "gen/formulas.h"
#include "gen/model.h"

namespace orrery::gen {

struct GenOptions;  // gen/gen_args.h

enum class EmbeddingSharding { kTable, kRow };
const char* ShardingName(EmbeddingSharding s);

struct DlrmStrategy {
  int64_t npus = 1;         // N: every rank holds the MLPs and a share of the embeddings
  int64_t local_batch = 1;  // b: samples per rank per iteration; global batch B = b·N
  EmbeddingSharding sharding = EmbeddingSharding::kTable;
  uint64_t bucket_bytes = 25 * kBytesPerMiB;  // MLP gradient bucket (PyTorch DDP's 25 MiB)
  uint64_t bytes_per_value = 2;               // 16-bit embeddings, activations, gradients
};

// Table sharding, greedy by size (longest-processing-time first): tables in
// decreasing row count (equal counts: lower table index first), each to the
// rank holding the fewest rows so far (equal: the lowest rank). Returns the
// owner rank of every table.
std::vector<int> AssignTables(const std::vector<int64_t>& rows, int64_t npus);

// What one rank holds and reads.
struct DlrmRankShare {
  std::vector<int> tables;  // table sharding: the tables it holds (ascending)
  uint64_t rows = 0;        // embedding rows held (row sharding: its slice of every table)
  uint64_t lookups = 0;     // rows read per iteration in the forward pass
};
// Table sharding: rank r looks up its tables for the global batch,
// B·Σ_{t on r} pooling_t. Row sharding: rank r holds rows_t/N rows of table t
// (the first rows_t mod N ranks one more) and, indices being spread uniformly,
// reads B·pooling_t/N = b·pooling_t rows of every table.
std::vector<DlrmRankShare> ShareRanks(const DlrmDesc& d, const DlrmStrategy& s);

// Bytes of one rank's pooled embeddings for its local batch, b·T·d·bytes:
// the comm_size of the forward and backward all-to-all (table sharding) and of
// the backward all-gather (row sharding); the forward reduce-scatter (row
// sharding) reduces the partial sums of the global batch, B·T·d·bytes.
uint64_t DlrmPooledBytes(const DlrmDesc& d, const DlrmStrategy& s);

// FLOPs of one iteration summed over all ranks, closed form:
// 6·B·Σ_layers in·out + 6·B·pairs·d + 3·B·d·Σ pooling
// (MLP GEMMs forward 2·B·in·out and backward twice that; the dot interaction
// 2d per pair per sample, backward twice; one FLOP per looked-up element,
// backward twice).
Flops DlrmClosedFormFlops(const DlrmDesc& d, int64_t global_batch);

struct DlrmMemory {
  uint64_t embedding_bytes = 0;   // rows held · d · bytes (SGD: no optimizer state)
  uint64_t mlp_state_bytes = 0;   // 16 B per MLP parameter (mixed-precision Adam, replicated)
  uint64_t activation_bytes = 0;  // kept for the backward pass (docs/generator.md)
  uint64_t total_bytes = 0;
};
DlrmMemory DlrmRankMemory(const DlrmDesc& d, const DlrmStrategy& s, const DlrmRankShare& share);
// Over capacity: a table larger than one NPU's HBM (table sharding), or a
// rank whose footprint exceeds it; the message names the rank, its class and
// the numbers.
Status CheckDlrmCapacity(const ModelDesc& m, const DlrmStrategy& s, uint64_t hbm_bytes);

Status ValidateDlrmStrategy(const ModelDesc& m, const DlrmStrategy& s);
// One class per distinct forward lookup count (the only thing that differs
// between ranks' graphs); classes numbered by their lowest rank. All ranks
// sit on the dp axis; the one group holds every rank.
Result<Workload> GenerateDlrm(const ModelDesc& m, const DlrmStrategy& s);

// `orrery gen` flags → DLRM strategy: --npus (or --dp), --global-batch (B,
// divided by N) or --microbatch-size (b), --embedding-sharding, --bucket-mb.
Result<DlrmStrategy> DlrmStrategyFromOptions(const GenOptions& o);
struct DlrmGenerated {
  DlrmStrategy strategy;
  Workload workload;
};
// The whole path for `orrery gen` and `run --generate`: strategy, validation,
// capacity (unless --allow-over-capacity), graphs.
Result<DlrmGenerated> GenerateDlrmFromOptions(const ModelDesc& m, const GenOptions& o);

std::string FormatDlrmSummary(const ModelDesc& m, const DlrmStrategy& s, const Workload& w, uint64_t hbm_bytes);

}  // namespace orrery::gen
