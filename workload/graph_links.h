// The second half of loading a rank's trace (workload/graph.h): its nodes
// linked by their dependencies. Ids are resolved, children are kept in
// compressed rows, cycles are found; every error names the edge's kind
// (data_deps or ctrl_deps), and --ctrl-deps=repair drops the control edges
// that point nowhere, at the node itself or lie on a cycle (an edge lies on a
// cycle when both its ends are in one strongly connected component).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "extern/chakra.pb.h"
#include "workload/graph.h"

namespace orrery {

// Where the loader's problems go: returned (the first one stops the load), or
// listed (GraphLoadOptions::problems: each is kept and the load goes on).
class ProblemSink {
 public:
  explicit ProblemSink(TraceProblems* list) : list_(list) {}
  // True to go on (the problem was listed); false to stop (status() holds it).
  bool Take(Status st);
  const Status& status() const { return first_; }
  uint64_t listed() const { return list_ ? list_->count : 0; }

 private:
  TraceProblems* list_;
  Status first_;
};

// Every node's dependencies in read order, in one array: node k's data edges
// are [begin[k], ctrl[k]), its control edges [ctrl[k], begin[k + 1]); each
// part sorted without repeats, and an edge given as both kinds kept as data.
struct DependencyLists {
  std::vector<uint64_t> ids;
  std::vector<uint32_t> begin{0};
  std::vector<uint32_t> ctrl;
};

Status AppendDependencies(const ChakraProtoMsg::Node& n, const std::string& where, DependencyLists* deps);

// Sorts `g`'s nodes by id, resolves `deps` (in read order) and links the
// children, then checks that no cycle is left. Problems go to `sink`; false
// when the load must stop.
bool LinkGraph(NpuGraph* g, const DependencyLists& deps, const GraphLoadOptions& options, ProblemSink* sink);

// Component id per node index over the graph's children lists (Tarjan's
// algorithm, iterative: no recursion however long a chain is).
std::vector<uint32_t> StronglyConnected(const NpuGraph& g);

}  // namespace orrery
