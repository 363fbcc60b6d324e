// Command-line options of `orrery gen` (and `orrery run --generate="..."`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
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
};

// Parses "--key=value" / "--flag" arguments. Numbers go through core/parse.h;
// an unknown flag is an error with a did-you-mean.
Result<GenOptions> ParseGenArgs(const std::vector<std::string>& args);
std::string GenUsage();

}  // namespace orrery::gen
