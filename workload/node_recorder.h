// What each node of each simulated rank did, kept only when a run asks for it
// (--critical-path): when it started and ended and what it waited for. One
// fixed-size record per node and iteration, in one vector per rank: O(nodes)
// memory, no allocation per event. report/critical_path.h walks them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/limits.h"
#include "core/tick.h"
#include "system/npu_sys.h"

namespace orrery {

inline constexpr uint32_t kNoNode = 0xffffffffu;

// An NPU's hardware slots: one CPU op, one GPU compute op, and one
// communication op per stream (kSlotComm + the node's comm_stream); receives,
// metadata and invalid nodes take none (kSlotNone).
enum NodeSlot : int { kSlotCpu = 0, kSlotGpu = 1, kSlotNone = 2, kSlotComm = 3 };
inline constexpr int kNumSlots = kSlotComm + kMaxCommStreams;

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

  // The chunks of a collective in flight change phases: a mark in the log of
  // the collective's communication stream when its set of dimensions changes (a
  // rank has one collective at a time per stream: they hold its slot).
  void OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) override;
  // The marks of `rank`'s collectives on communication stream `stream`.
  const std::vector<PhaseMark>& phase_log(int rank, int stream) const {
    const Rank& r = ranks_[rank];
    return stream < static_cast<int>(r.streams.size()) ? r.streams[stream].log : no_marks_;
  }

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
  // `slot`: a NodeSlot (kSlotComm + stream for communication).
  void Issued(int rank, uint32_t idx, int slot, Tick now);
  // Collective `idx` on `group` and communication stream `stream` starts.
  void CollectiveIssued(int rank, uint32_t idx, int group, int stream);
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
    uint32_t base = 0;               // first record of the current iteration
    uint32_t slot_last[kNumSlots];   // last node to release each slot (kNoNode: none yet)
    std::vector<uint32_t> coll_seq;  // per group + 1
    bool begun = false;
    struct Stream {
      uint32_t open = kNoNode;      // node index of its collective in flight (or the last one)
      uint32_t phases_on[32] = {};  // chunks in a phase on each dimension bit (see PhaseMark)
      std::vector<PhaseMark> log;
    };
    std::vector<Stream> streams;  // up to the highest stream a collective used
  };
  std::vector<Rank> ranks_;
  int groups_ = 0;
  const std::vector<PhaseMark> no_marks_;
  Delivery last_delivery_;
};

}  // namespace orrery
