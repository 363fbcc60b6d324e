// Rank classes: the symmetric fast path generalised from "every rank runs the
// same graph" to classes of ranks whose graphs are the same up to renaming
// (node ids; peer ranks as network offsets; communicator groups of the same
// shape) and whose network position is equivalent. One representative per
// class is simulated; messages inside a class are mirrored (the peer does the
// same at the same time), messages between classes go between the
// representatives for real. docs/design.md "Rank classes" has the argument.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "extern/astra_config.h"
#include "network/topology.h"
#include "run/spec.h"
#include "system/options.h"
#include "system/rank_class_map.h"
#include "workload/graph.h"
#include "workload/graph_source.h"

namespace orrery {

struct ClassInputs {
  const Spec* spec = nullptr;
  const Topology* topology = nullptr;
  const GraphSource* source = nullptr;
  // Communicator groups by index (the order the engine registers them), sorted ranks.
  const std::vector<std::vector<int>>* groups = nullptr;
  // Reads one rank's graph (group indices resolved).
  std::function<Result<NpuGraph>(int)> load;
};

struct ClassDecision {
  bool use = false;
  // Used: how many classes and where they came from. Otherwise why not.
  std::string note;
  RankClassMap map;
  // Used: the representatives' graphs, in rank order.
  std::vector<NpuGraph> rep_graphs;
};

// Decides whether the run can simulate one representative per rank class.
// Errors only for unreadable inputs; every other obstacle is a note.
Result<ClassDecision> DecideRankClasses(const ClassInputs& in);

// For a run: the Spec's communicator groups, indexed as the engine registers
// them (by name); graphs read from the Spec's source with `lo` and those indices.
Result<ClassDecision> DecideRankClassesForRun(const Spec& spec, const Topology& topology, GraphLoadOptions lo);

}  // namespace orrery
