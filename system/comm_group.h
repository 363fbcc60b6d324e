// A communicator group: the ranks a collective with a group id runs over
// (ASTRA-sim's comm_group JSON, or a generator's TP/DP/PP/... group).
#pragma once
#include <string>
#include <vector>

namespace orrery {

struct CommGroup {
  int id = -1;
  std::string name;
  std::vector<int> ranks;  // sorted
  bool aligned = false;    // exactly the NPUs of some whole dimensions
  std::vector<bool> dims;  // for aligned groups: the dimensions it spans
};

}  // namespace orrery
