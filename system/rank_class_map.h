// Rank classes (decided by workload/rank_classes.h): ranks whose graphs are
// the same up to renaming and whose network position is equivalent run in
// lockstep, so one representative per class is simulated. The engine reads
// this map to decide, per message, whether the peer is simulated (a real
// message between representatives) or mirrored (the peer is a member of the
// sender's own class and does the same thing at the same time).
#pragma once
#include <cstdint>
#include <vector>

namespace orrery {

struct RankClassMap {
  std::vector<int32_t> class_of;  // per rank: its class
  std::vector<int32_t> rep;       // per class: the representative rank (simulated)
  std::vector<uint64_t> size;     // per class: its members
  bool empty() const { return class_of.empty(); }
  int num_classes() const { return static_cast<int>(rep.size()); }
  int RepOf(int rank) const { return rep[class_of[rank]]; }
  bool SameClass(int a, int b) const { return class_of[a] == class_of[b]; }
};

}  // namespace orrery
