// A communicator group: the ranks a collective with a group id runs over
// (ASTRA-sim's comm_group JSON, or a generator's TP/DP/PP/... group), and its
// shape on the network's dimensions.
#pragma once
#include <string>
#include <vector>

namespace orrery {

class Topology;

// Where a group's members sit on each dimension. A group is a *grid* when on
// every dimension its members' coordinates are lo + j·step (j < n) and it holds
// every combination of them, n_0·n_1·… members. Data parallelism beside
// TP 2 on DGX-like nodes, Switch(8) × Switch(2):
//
//   dim 0 (in a node):   0 1 2 3 4 5 6 7     members {0,2,4,6, 8,10,12,14}
//                        x . x . x . x .     dim 0: lo 0, step 2, n 4 (partial)
//   dim 1 (the nodes):   0 1                 dim 1: lo 0, step 1, n 2 (whole)
//
// `aligned`: a grid whose varying dimensions are whole (n = the dimension's
// NPUs, step 1), the groups ASTRA-sim's and the hierarchical models both know.
struct GroupGrid {
  bool grid = false;
  bool aligned = false;
  int varying = 0;               // dimensions with n > 1
  std::vector<int> lo, step, n;  // per dimension; n 1 where the group does not vary
};

// The grid of a group's sorted ranks (not a grid when they are not strictly
// increasing, not all NPUs of the network, or not every combination). O(members · dimensions + Σ NPUs of a
// dimension).
GroupGrid GridOf(const Topology& t, const std::vector<int>& sorted_ranks);

// Whether the hierarchical group-collective model runs the group's
// collectives one phase per dimension, each over the group's members along
// it (NCCL's rings cross a node's boundary once per adapter, not on one link
// for the whole group): a group of whole dimensions, or a grid over several
// dimensions whose partial ones are a Switch or FullyConnected (every member
// of a partial dimension then sits at the same distance from every other).
// Otherwise it is one flat ring over the sorted ranks.
bool PhasesPerDimension(const Topology& t, const GroupGrid& g);

struct CommGroup {
  int id = -1;
  std::string name;
  std::vector<int> ranks;  // sorted
  bool aligned = false;    // exactly the NPUs of some whole dimensions
  std::vector<bool> dims;  // the dimensions it spans
  GroupGrid grid;
  bool per_dimension = false;  // PhasesPerDimension
};

}  // namespace orrery
