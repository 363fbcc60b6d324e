// Every rank that takes part in a collective must issue the same one: the k-th
// collective a rank issues in a group (or on all NPUs) is paired with the k-th
// of the group's lowest rank, and type and size must agree; a collective the
// lowest rank issued with the same node id in another group is a group
// mismatch. A rank with fewer collectives is left to the deadlock report. One
// pass over the loaded graphs, O(total nodes); nothing on the hot path.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "system/collective_engine.h"
#include "workload/graph.h"

namespace orrery {

struct GroupInfo {
  std::string name;
  std::vector<int> ranks;  // sorted
};

// `graphs[i].rank` is the rank; a symmetric run passes rank 0's graph only.
// `groups[g]` describes communicator group g (WorkNode::group).
Status CheckCollectiveAgreement(const std::vector<NpuGraph>& graphs, const std::vector<GroupInfo>& groups);
// The same with the engine's communicator groups.
Status CheckCollectiveAgreement(const std::vector<NpuGraph>& graphs, const CollectiveEngine& engine);

}  // namespace orrery
