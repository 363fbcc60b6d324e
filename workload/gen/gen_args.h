// Command-line options of `orrery gen` (and `orrery run --generate="..."`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "network/topology.h"
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
  std::string network;        // --network: YAML or notation; the summary shows where the axes fall
  std::string place;          // --place=tp:0,dp:1,...: the order from a placement on `network`
  bool order_given = false;
};

// With --place: reads the network and sets the strategy's rank order from
// the placement (an error if --order is given too, or --network is missing).
// Fills `dims` with the network's dimensions when --network is given.
Status ResolvePlacement(GenOptions* o, std::vector<Dim>* dims);

// Parses "--key=value" / "--flag" arguments. Numbers go through core/parse.h;
// an unknown flag is an error with a did-you-mean.
Result<GenOptions> ParseGenArgs(const std::vector<std::string>& args);
std::string GenUsage();

}  // namespace orrery::gen
