// Rank classes (decided by run/rank_classes.h): ranks whose graphs are
// the same up to renaming and whose network position is equivalent run in
// lockstep, so one representative per class is simulated. The engine reads
// this map to decide, per message, whether the peer is simulated (a real
// message between representatives) or mirrored (the peer is a member of the
// sender's own class and does the same thing at the same time).
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
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
  // The rank a message to another class's member is delivered to (and a
  // receive from it posted for): that class's representative. A collective
  // spanning classes (a flat ring over a group whose members see different
  // neighbours) sends to a member that is not simulated; the representative
  // stands at the same place of its own ring (rank_classes.cc checks this).
  int Simulated(int rank, int peer) const {
    return peer < static_cast<int>(class_of.size()) && !SameClass(rank, peer) ? RepOf(peer) : peer;
  }
  // A point-to-point message from a representative to a member of its own
  // class is modelled as the message that the class member `MirrorFrom`
  // sends the representative at the same instant (same node, same tag, equal
  // delay): key (representative << 32 | member), sorted.
  std::vector<std::pair<uint64_t, int32_t>> mirror_from;
  int MirrorFrom(int rep, int dst) const {
    const uint64_t key = static_cast<uint64_t>(rep) << 32 | static_cast<uint32_t>(dst);
    auto it = std::lower_bound(mirror_from.begin(), mirror_from.end(), std::make_pair(key, INT32_MIN));
    return it != mirror_from.end() && it->first == key ? it->second : -1;
  }
};

}  // namespace orrery
