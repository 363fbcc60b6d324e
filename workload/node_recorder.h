// What each node of each simulated rank did, kept only when a run asks for it
// (--critical-path): when it started and ended and what it waited for. One
// fixed-size record per node and iteration, in one vector per rank: O(nodes)
// memory, no allocation per event. workload/critical_path.h walks them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tick.h"

namespace orrery {

inline constexpr uint32_t kNoNode = 0xffffffffu;

// Why a node started when it did.
enum class WaitedFor : uint8_t {
  kNothing = 0,   // a root of the first iteration: ready at time 0
  kDependency,    // its last dependency (pred) finished
  kSlot,          // it was ready, but its slot (CPU, GPU, communication) was held until pred finished
  kIteration,     // a root of a later iteration: the previous iteration ended with pred
};

struct NodeRecord {
  Tick start = 0;  // until the node issues: the time it became ready
  Tick end = 0;
  uint32_t pred = kNoNode;   // index (in the same rank's records) of what it waited for
  uint32_t aux = kNoNode;    // collective: its sequence number in its group; receive: the matched send's index
  int32_t remote_rank = -1;  // a receive completed by a message's arrival: the sender's rank
  WaitedFor why = WaitedFor::kNothing;
};

class NodeRecorder {
 public:
  // `groups`: communicator groups (collectives are numbered per group and rank).
  NodeRecorder(int ranks, int groups);

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
    ranks_[rank].records[Flat(rank, idx)].aux = ranks_[rank].coll_seq[group + 1]++;
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
    r.remote_rank = sender;
    r.aux = sender_flat;
  }

  const std::vector<NodeRecord>& records(int rank) const { return ranks_[rank].records; }
  int ranks() const { return static_cast<int>(ranks_.size()); }

 private:
  struct Rank {
    std::vector<NodeRecord> records;
    uint32_t base = 0;  // first record of the current iteration
    uint32_t slot_last[4] = {kNoNode, kNoNode, kNoNode, kNoNode};  // last node to release each slot
    std::vector<uint32_t> coll_seq;                                // per group + 1
    bool begun = false;
  };
  std::vector<Rank> ranks_;
  Delivery last_delivery_;
};

}  // namespace orrery
