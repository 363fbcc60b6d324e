// Command-line options of `orrery gen` (and `orrery run --generate="..."`).
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "workload/gen/dlrm.h"
#include "workload/gen/strategy.h"

namespace orrery::gen {

struct GenOptions {
  std::string model;          // preset name or YAML path
  Strategy strategy;
  std::string out;            // PREFIX: writes PREFIX.<rank>.et and PREFIX.comm_groups.json
  bool summary = false;
  bool list_models = false;
  bool help = false;
  uint64_t hbm_bytes = 80ull * 1000 * 1000 * 1000;  // per-NPU capacity (--hbm-gb, default 80 GB)
  bool allow_over_capacity = false;
  EmbeddingSharding embedding_sharding = EmbeddingSharding::kTable;  // DLRM models only
  std::set<std::string> given;  // the flags on the command line, without "--"
};

// Parses "--key=value" / "--flag" arguments. Numbers go through core/parse.h;
// an unknown flag is an error with a did-you-mean.
Result<GenOptions> ParseGenArgs(const std::vector<std::string>& args);
std::string GenUsage();
// Refuses flags that do not apply to the model's kind (--tp for a DLRM,
// --embedding-sharding for a transformer), naming the flag and what applies.
Status CheckFlagsForModel(const GenOptions& o, const ModelDesc& m);

}  // namespace orrery::gen
