// The per-NPU system layer: it splits a collective into chunks, each
// a sequence of phases (one per network dimension), keeps one queue per
// dimension where at most `active-chunks-per-dimension` chunks run at once,
// and matches message sends with receives. The scheduling rules reproduce
// ASTRA-sim's so that its inputs give its numbers. Everything it needs from
// the world comes through a ChunkContext (system/chunk_context.h); it never
// sees the engine that plans the collectives.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "core/event_queue.h"
#include "system/match_table.h"
#include "system/options.h"
#include "system/small_pool.h"
#include "system/chunk_context.h"

namespace orrery {

class FixedRoute;
class NpuSys;
class Chunk;

// The members of one logical ring (or tree) as seen by one NPU: either a
// regular slice of a dimension (base + k * offset) or an explicit list.
struct RingView {
  const std::vector<int>* members = nullptr;  // explicit list (communicator groups)
  int size = 0;
  int index = 0;   // this NPU's position
  int base = 0;    // id of position 0 (regular slices)
  int offset = 1;  // id stride between positions (regular slices)
  int Member(int k) const { return members ? (*members)[k] : base + k * offset; }
  int Next(int k, bool clockwise) const { return clockwise ? (k + 1 == size ? 0 : k + 1) : (k == 0 ? size - 1 : k - 1); }
  // `steps` (>= 0) applications of Next from position k, in O(1).
  int Advance(int k, int steps, bool clockwise) const {
    const int s = steps % size;
    return clockwise ? (k + s) % size : (k - s + size) % size;
  }
};

struct PhaseSpec {
  ComType type = ComType::kAllReduce;
  int queue_id = 0;
  uint64_t size = 0;
  uint64_t final_size = 0;
  AlgoSpec algo;
  RingView ring;
  bool dbt_root_max = true;  // double binary tree: which of the two trees
};

// Something that waits for a message (a collective chunk or a P2P receive).
class RecvClient {
 public:
  virtual ~RecvClient() = default;
  virtual void OnRecv(uint64_t cookie) = 0;
};

// Hears each chunk of a collective move between phases (the critical
// path splits a collective's time by the dimensions it is on). `cookie` is the
// collective's; a dimension is a network dimension, kNoPhase (the chunk starts
// or ends) or kNotOneDim (a phase over a flat group, all NPUs, or a rooted graph).
class PhaseObserver {
 public:
  static constexpr int kNoPhase = -1;
  static constexpr int kNotOneDim = -2;
  virtual ~PhaseObserver() = default;
  virtual void OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) = 0;
};

// A collective in flight on one NPU (ASTRA-sim's DataSet).
class CollectiveDoneClient {
 public:
  virtual ~CollectiveDoneClient() = default;
  virtual void OnCollectiveDone(uint64_t cookie) = 0;
};

struct CollectiveHandle {
  int total_chunks = 0;
  int finished_chunks = 0;
  CollectiveDoneClient* client = nullptr;
  uint64_t cookie = 0;
};

class Algorithm : public Pooled {
 public:
  explicit Algorithm(Chunk* chunk) : chunk_(chunk) {}
  virtual ~Algorithm() = default;
  virtual void OnInit() = 0;
  virtual void OnGeneral() = 0;
  virtual void OnPacketReceived() = 0;
  virtual void OnTimer(uint64_t arg) {}

 protected:
  void StartTimer(uint64_t delay_ns, uint64_t arg);
  // The memory-bus hop before a send (NPU to MA) or after a receive (MA to
  // NPU): endpoint-delay ns, plus the reduction cost when `processed`.
  void Bundle(uint64_t bytes, bool processed);
  void Send(int dst, uint64_t bytes);
  void Recv(int src, uint64_t bytes);
  void Exit();
  int rank() const;

 private:
  // Send's every case; Send itself takes the common one inline.
  __attribute__((noinline)) void SendGeneral(int dst, uint64_t bytes);
  // Recv when the transport redirects messages (symmetric runs, rank classes).
  __attribute__((noinline)) void RecvRedirected(int src, uint64_t bytes);

 protected:
  Chunk* chunk_;
};

// The phase's algorithm, in `arena`'s slot for the chunk's rank when it fits
// (system/rank_arena.h; null: the pool).
std::unique_ptr<Algorithm> MakeAlgorithm(Chunk* chunk, const PhaseSpec& spec, RankArena* arena);
// The size of the built-in packet algorithms (ring, halving-doubling,
// direct): the slot of the algorithms' rank arena.
inline constexpr size_t kAlgorithmSlotBytes = 192;

// The queue prefetches a chunk's algorithm before the chunk's events run
// (HintedEventHandler: the hint follows algo_).
class Chunk : public HintedEventHandler, public RecvClient, public Pooled {
 public:
  enum Kind : uint32_t {
    kBundleArrived = 1 | kHintedKind,    // the memory-bus hop is done (nothing to reduce)
    kBundleProcessed = 2 | kHintedKind,  // the hop and then the reduction are done
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
  void Init();
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
  // HandleEvent's parts (system/npu_sys.cc only): Dispatch, inline, hands
  // the event on (Deliver for a message); out of line, the rare case of the
  // store's garbage freed before the event.
  inline void Dispatch(uint32_t kind, uint64_t arg);
  __attribute__((noinline)) void CollectThenDispatch(uint32_t kind, uint64_t arg);
  friend class Algorithm;
  // Three cache lines (pooled and arena objects start on a line). First, with
  // the vtable pointers: what every event and send of the chunk touches.
  std::unique_ptr<Algorithm> algo_;
  const ChunkContext* ctx_;  // the owner's, kept here: one load on the hot path, not a chain
  int rank_;  // owner_->rank(), kept here: the algorithms ask for it on every step
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
  uint32_t store_slot_ = 0;  // position in the ChunkStore's list of live chunks
  bool initialized_ = false;
};

inline int Algorithm::rank() const { return chunk_->rank_; }

class NpuSys {
 public:
  NpuSys(const ChunkContext* ctx, int rank, int num_queues);
  int rank() const { return rank_; }
  const ChunkContext* context() const { return ctx_; }

  // Splits a collective into chunks and schedules them. Each chunk
  // is tagged tags::Chunk(group, (*chunk_counter)++); `group_pos` is this
  // rank's position in the group (its rank when group < 0).
  void StartCollective(CollectiveHandle* coll, std::vector<std::vector<PhaseSpec>> chunks, int group, int group_pos,
                       uint64_t* chunk_counter);
  void ProceedToNextPhase(Chunk* s);

  // Message matching, keyed by (source, tag, sub) (system/tag.h).
  void PostRecv(int src, uint64_t tag, uint64_t sub, RecvClient* client, uint64_t cookie);
  void OnArrival(int src, uint64_t tag, uint64_t sub);
  void DescribePending(std::vector<std::string>* out) const;
  // Point-to-point messages that arrived but no receive ever took.
  void DescribeUnmatched(std::vector<std::string>* out) const;

 private:
  // A chunk that enters the ChunkDirectory takes the messages for `tag`
  // (sub 0) that arrived before it started.
  void TakeEarlyArrivals(uint64_t tag, Mailbox* mail);
  void InsertChunk(std::list<Chunk*>* queue, Chunk* s);
  void NotifyChunkAdded(int q);
  void NotifyChunkRemoved(int q);
  void StartWaiting(int q);
  void SweepMatches();
  void EraseFromQueue(int q, Chunk* s);

  const ChunkContext* ctx_;
  int rank_;
  int priority_counter_ = 0;
  std::vector<std::list<Chunk*>> active_;
  std::vector<int> running_;
  std::vector<uint8_t> mixed_;  // per queue: a waiting chunk was placed by size (SmallestFirst)
  MatchTable match_;
  std::vector<std::pair<int, uint32_t>> early_;  // scratch for TakeEarlyArrivals
};

}  // namespace orrery
