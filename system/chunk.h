// A chunk of a collective on one NPU (ASTRA-sim's stream): it moves through
// its phases, one algorithm per phase, and is the event handler of that
// algorithm's bundles, timers and direct deliveries. Its NpuSys
// (system/npu_sys.h) queues it per dimension; the ChunkStore
// (system/chunk_store.h) owns it.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "system/algorithm.h"
#include "system/chunk_context.h"
#include "system/clients.h"
#include "system/match_table.h"
#include "system/phase_spec.h"
#include "system/small_pool.h"

namespace orrery {

class FixedRoute;
class NpuSys;

// The queue prefetches a chunk's algorithm before the chunk's events run
// (HintedEventHandler: the hint follows algo_).
class Chunk : public HintedEventHandler, public RecvClient, public Pooled {
 public:
  enum Kind : uint32_t {
    kBundleArrived = 1 | kHintedKind,                 // the memory-bus hop is done (nothing to reduce)
    kBundleProcessed = 2 | kHintedKind,               // the hop and then the reduction are done
    kBundleReducing = kBundleProcessed | kRelayKind,  // the hop is done: the queue relays to kBundleProcessed
    kTimer = 3 | kHintedKind,
    kDelivered = 4 | kHintedKind  // a message from rank `arg` (MessageTransport::SendDirect)
  };
  // `group_pos`: the rank's position in the collective's group (its rank
  // without a group), its index in the ChunkDirectory.
  Chunk(NpuSys* owner, CollectiveHandle* coll, uint64_t tag, int group_pos, int priority,
        std::vector<PhaseSpec> phases);
  void HandleEvent(uint32_t kind, uint64_t arg) override;
  void OnRecv(uint64_t cookie) override;
  // Its queue lets the current phase run: the algorithm starts.
  void StartPhase();
  // A receive from `src` for this chunk's tag (sub 0): in the chunk's own
  // Mailbox when it is in the ChunkDirectory, else the NPU's table.
  void PostRecvFrom(int src);
  // A message for this chunk arrived from `src` (the directory found it).
  // Out of line: the mailbox's search needs registers that HandleEvent's
  // other paths, plain jumps, would otherwise save and restore.
  __attribute__((noinline)) void Deliver(int src);
  // Built-in algorithms only (ring, halving-doubling, double binary tree):
  // every receive waits in the Mailbox, so the directory may deliver here.
  bool MailboxEligible() const;
  // The algorithm of the phase the chunk is in (null between phases).
  void SetAlgorithm(std::unique_ptr<Algorithm> a) {
    algo_ = std::move(a);
    prefetch_hint_ = algo_.get();
  }
  const Algorithm* algorithm() const { return algo_.get(); }
  std::unique_ptr<Algorithm> TakeAlgorithm() {
    prefetch_hint_ = nullptr;
    return std::move(algo_);
  }

  NpuSys* owner() const { return owner_; }
  const ChunkContext* context() const { return ctx_; }
  uint64_t tag() const { return tag_; }

 private:
  friend class NpuSys;
  friend class ChunkStore;  // the directory: mail_, group_pos_, store_slot_
  // HandleEvent's parts (system/chunk.cc only): Dispatch, inline, hands
  // the event on (Deliver for a message); out of line, the rare case of the
  // store's garbage freed before the event.
  inline void Dispatch(uint32_t kind, uint64_t arg);
  __attribute__((noinline)) void CollectThenDispatch(uint32_t kind, uint64_t arg);
  friend class Algorithm;
  // Three cache lines (pooled and arena objects start on a line). First, with
  // the vtable pointers: what every event and send of the chunk touches.
  std::unique_ptr<Algorithm> algo_;
  const ChunkContext* ctx_;  // the owner's, kept here: one load on the hot path, not a chain
  int rank_;                 // owner_->rank(), kept here: the algorithms ask for it on every step
  // The receiving chunk of this chunk's last direct send, its rank and the
  // backend's route there (null: Delay): the receiver stays alive while this
  // chunk still sends to it (it must take every message), so the next send
  // to that rank needs no directory lookup and no coordinates.
  int peer_rank_ = -1;
  Chunk* peer_ = nullptr;
  FixedRoute* peer_route_ = nullptr;
  // Second: what a delivery touches.
  Mailbox mail_;  // used when the chunk is in the ChunkDirectory (mail_.on())
  NpuSys* owner_;
  CollectiveHandle* coll_;
  // Third: the first send to a peer, phase changes.
  uint64_t tag_;
  int priority_;
  int group_pos_;
  std::vector<PhaseSpec> phases_;
  uint32_t next_phase_ = 0;
  int queue_id_ = -1;
  int phase_dim_ = PhaseObserver::kNoPhase;  // for the PhaseObserver
  uint32_t store_slot_ = 0;                  // position in the ChunkStore's list of live chunks
  bool phase_started_ = false;               // the current phase runs (its queue started it); else it waits
};

inline int Algorithm::rank() const { return chunk_->rank_; }

}  // namespace orrery
