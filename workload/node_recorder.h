// What each node of each simulated rank did, kept only when a run asks for it
// (--critical-path): when it started and ended and what it waited for. One
// fixed-size record per node and iteration, in one vector per rank: O(nodes)
// memory, no allocation per event. report/critical_path.h walks them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tick.h"
#include "system/npu_sys.h"

namespace orrery {

inline constexpr uint32_t kNoNode = 0xffffffffu;

// Why a node started when it did.
enum class WaitedFor : uint8_t {
  kNothing = 0,  // a root of the first iteration: ready at time 0
  kDependency,   // its last dependency (pred) finished
  kSlot,         // it was ready, but its slot (CPU, GPU, communication) was held until pred finished
  kIteration,    // a root of a later iteration: the previous iteration ended with pred
};

struct NodeRecord {
  Tick start = 0;  // until the node issues: the time it became ready
  Tick end = 0;
  uint32_t pred = kNoNode;  // index (in the same rank's records) of what it waited for
  // A receive completed by a message's arrival: aux = the send's record index, aux2 = the sender's rank.
  // A collective: aux = its sequence number in its group, aux2 = its first mark in the rank's phase log.
  uint32_t aux = kNoNode, aux2 = kNoNode;
  WaitedFor why = WaitedFor::kNothing;
};

static_assert(sizeof(NodeRecord) == 32, "README and docs/status.md give 32 bytes per node record");

// From `at` on, the network dimensions a rank's collective has a phase on:
// bit d for dimension d (d < 31), bit 31 for a phase on no single dimension.
struct PhaseMark {
  Tick at;
  uint32_t dims;
};

class NodeRecorder : public PhaseObserver {
 public:
  // `groups`: communicator groups (collectives are numbered per group and rank).
  NodeRecorder(int ranks, int groups);

  // The chunks of the collective in flight (a rank has one at a time: they hold
  // its communication slot) change phases: a mark when the set of dimensions changes.
  void OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) override;
  const std::vector<PhaseMark>& phase_log(int rank) const { return ranks_[rank].phase_log; }

  // A new iteration of `rank` begins: `nodes` more records. False when the
  // records would pass 2^32 - 1 per rank.
  bool BeginIteration(int rank, uint32_t nodes);
  // Index of node `idx` of the current iteration of `rank`.
  uint32_t Flat(int rank, uint32_t idx) const { return ranks_[rank].base + idx; }

  void Ready(int rank, uint32_t idx, Tick now, uint32_t by, WaitedFor why) {
    NodeRecord& r = ranks_[rank].records[Flat(rank, idx)];
    r.start = now;
    r.pred = by;
    r.why = why;
  }
  // `slot`: 0 CPU, 1 GPU, 2 communication, 3 none.
  void Issued(int rank, uint32_t idx, int slot, Tick now);
  void CollectiveIssued(int rank, uint32_t idx, int group) {
    NodeRecord& r = ranks_[rank].records[Flat(rank, idx)];
    r.aux = ranks_[rank].coll_seq[group + 1]++;
    r.aux2 = static_cast<uint32_t>(ranks_[rank].phase_log.size());
  }
  void Done(int rank, uint32_t idx, int slot, Tick now);

  // A point-to-point message from `rank`'s send `idx` was delivered (the receive
  // it completes, if one waits, hears of it next, at the same time).
  void Delivered(int rank, uint32_t idx, Tick now) { last_delivery_ = Delivery{rank, Flat(rank, idx), now}; }
  struct Delivery {
    int rank = -1;
    uint32_t flat = kNoNode;
    Tick at = 0;
  };
  const Delivery& last_delivery() const { return last_delivery_; }
  void SetSender(int rank, uint32_t idx, int sender, uint32_t sender_flat) {
    NodeRecord& r = ranks_[rank].records[Flat(rank, idx)];
    r.aux = sender_flat;
    r.aux2 = static_cast<uint32_t>(sender);
  }

  const std::vector<NodeRecord>& records(int rank) const { return ranks_[rank].records; }
  int ranks() const { return static_cast<int>(ranks_.size()); }

 private:
  struct Rank {
    std::vector<NodeRecord> records;
    uint32_t base = 0;                                             // first record of the current iteration
    uint32_t slot_last[4] = {kNoNode, kNoNode, kNoNode, kNoNode};  // last node to release each slot
    std::vector<uint32_t> coll_seq;                                // per group + 1
    bool begun = false;
    uint32_t phases_on[32] = {};  // chunks in a phase on each dimension bit (see PhaseMark)
    std::vector<PhaseMark> phase_log;
  };
  std::vector<Rank> ranks_;
  Delivery last_delivery_;
};

}  // namespace orrery
