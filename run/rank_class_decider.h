// The rank-class decision (run/rank_classes.h) as a sequence of named
// steps over one state: find classes (from the generator or by comparing
// graphs), refine them by their peers' classes, pick representatives by
// following messages, then check what the engine's mirroring relies on. A
// step that finds an obstacle leaves its reason in the decision's note and
// the run falls back to the full engine; only unreadable inputs are errors.
// Internal to workload/: rank_classes.cc (classes) and rank_class_checks.cc
// (representatives and checks).
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "run/rank_classes.h"

namespace orrery {

// A network offset: the per-dimension coordinate difference (b - a, wrapped),
// written as the rank id it would have.
int Offset(const Topology& t, int a, int b);
// The rank at offset `off` from `a` (sign +1), or the one `a` is at `off` from (-1).
int Shift(const Topology& t, int a, int off, int sign);

// A communicator group's shape: its size and the dimensions its members vary
// in. Uniform when every member sees the same network: the group is whole
// dimensions (the engine runs it per dimension), or its members vary in one
// Switch or FullyConnected dimension only (a flat ring or direct exchange
// whose every pair of members is the same distance apart).
struct GroupShape {
  int key = 0;
  bool uniform = false;
  bool flat = false;  // not whole dimensions: the engine runs a flat ring over the sorted members
};

// Why a rank's graph rules classes out; "" when it does not.
std::string GraphReason(const NpuGraph& g, const SystemOptions& so, const std::vector<GroupShape>& shapes,
                        bool flat_rings);

class ClassDecider {
 public:
  explicit ClassDecider(const ClassInputs& in);
  Result<ClassDecision> Decide();

 private:
  // Step 1: ranks with equal graphs up to renaming, and each rank's peers.
  Status ClassesFromGenerator();  // rank_classes.cc
  void AssignGroupKinds();
  std::vector<std::vector<int>> FlatGroupsOfRanks() const;
  Result<std::vector<std::vector<int>>> FlatKindsOfDeclaredClasses();
  void ClassifyByPeers(const std::vector<std::vector<int>>& flat_kinds,
                       const std::vector<std::vector<int>>& flat_groups_of);
  Status ClassesFromTraces();  // rank_classes.cc
  // Step 1b: ranks of one class at different --heterogeneity compute speeds part.
  void SplitBySpeed();  // rank_classes.cc
  // Step 2: split until every member's peers are in the classes of every
  // other member's peers (a straggler's peers leave their class, and theirs...).
  void Refine();
  // Step 3: from rank 0, follow each representative's messages to other
  // classes; the peer becomes its class's representative.
  Status PickRepresentatives();
  // The representatives still to follow, and the spanning flat rings already represented.
  struct Frontier {
    std::vector<uint8_t> spanned;
    std::deque<int> queue;
  };
  Status FollowRepresentative(int rep, Frontier& f);
  void FollowGroupCollective(int rep, int group, Frontier& f);
  void AddSlabMask(const NpuGraph& g, const WorkNode& n);
  void FollowMessage(int rep, const WorkNode& n, Frontier& f);
  // Step 4, checks: collectives stay inside a class (or are a flat ring that
  // may span classes); messages to another class's unsimulated member are
  // exact when redirected; collectives on all NPUs stay inside a class.
  void CheckGroups();
  // Trace files: the ranks that run their i-th collective on group g are
  // g's members, all of them (equal graphs may name different groups of one
  // shape there; mirroring would then invent a peer's collective).
  void CheckGroupPositions();
  void CheckGeneratorGroups();
  void CheckCrossClassMessages();
  void CheckAllNpuCollectives();
  // Step 5: who sends each representative a mirrored message inside its class.
  void FindMirrorSenders();
  std::string Summary() const;

  // A flat ring of a generated workload may span classes.
  bool MaySpan(int group) const { return declared_ && !shapes_[group].uniform && shapes_[group].flat; }
  bool Stopped() const { return !d_.note.empty(); }

  const ClassInputs& in_;
  const Topology& t_;
  const int npus_;
  const std::vector<GroupShape> shapes_;
  const std::vector<int>* declared_ = nullptr;  // the generator's classes (null: trace files)
  ClassDecision d_;
  std::vector<int32_t> graph_class_;  // step 1's class of each rank
  size_t graph_classes_ = 0;          // how many step 1 found
  size_t speed_classes_ = 0;          // how many after SplitBySpeed
  std::vector<uint32_t> peer_begin_;  // each rank's peers: peer_of_[peer_begin_[r], peer_begin_[r+1])
  std::vector<int32_t> peer_of_;      // in its class's order
  std::vector<uint8_t> group_used_;   // groups some collective uses
  // A generator's members use "the group of the same kind": the group that
  // holds them with their representative's group's member offsets.
  std::vector<int> kind_of_group_;
  std::map<int, NpuGraph> loaded_;  // graphs step 1 read, kept for the representatives
  // Trace files: (position among a rank's collectives << 32 | group) -> ranks that run it there.
  std::unordered_map<uint64_t, uint32_t> group_uses_;
  int classes_ = 0;
  std::vector<std::vector<int>> kinds_used_;  // per class: the group kinds its collectives use
  std::vector<uint32_t> slab_masks_;          // involved dimensions of collectives on all NPUs
};

}  // namespace orrery
