// The symmetric fast path: when every rank runs the same graph on a symmetric
// network with a backend and algorithms that treat every rank alike, rank 0 is
// simulated as the representative of all ranks (exact, much faster). The
// decision is made on the graphs, not on the trace files: two ranks' traces
// are the same when their graphs agree node by node with node ids renamed by
// position (node types, attributes, dependency shape).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "extern/astra_config.h"
#include "run/spec.h"
#include "system/options.h"
#include "workload/graph.h"
#include "workload/graph_source.h"

namespace orrery {

struct SymmetryDecision {
  bool symmetric = false;
  // Symmetric: what was simulated. Otherwise why not, in one phrase:
  // "rank 3's trace differs from rank 0's at node 12 (comm_size)".
  std::string note;
};

// Decides whether the run of `spec` may simulate rank 0 alone. `load_rank`
// reads one rank's graph from the spec's source; a rank whose input the
// source's digest knows to be rank 0's is not read. Graphs read along the way
// are appended to `graphs`: rank 0's only (the others are compared and
// dropped; a full run reads them again).
Result<SymmetryDecision> DecideSymmetry(const Spec& spec, const std::function<Result<NpuGraph>(int)>& load_rank,
                                        std::vector<NpuGraph>* graphs);

// True when every algorithm of the list treats every rank alike (ring,
// direct, halving-doubling; not one*, double binary tree or custom).
bool AlgorithmsSymmetric(const std::vector<AlgoSpec>& list);

// A hash of the graph's structure (node ids and names left out): equal graphs
// hash equal.
uint64_t GraphShapeHash(const NpuGraph& g);

// "" when `b` equals `a` up to node ids (and names); else where they first
// differ, named by `b`'s node id: "at node 12 (comm_size)", or
// "in its number of nodes (10, rank 0 has 12)".
std::string GraphDifference(const NpuGraph& a, const NpuGraph& b);

}  // namespace orrery
