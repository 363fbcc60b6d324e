// Owns the per-NPU system layers, turns collectives into phases (issue and
// plan), and hands each delivered message to its receiver (delivery). Below
// it, one way: NpuSys (system/npu_sys.h) runs the phases through a
// ChunkContext the engine fills; messages leave through MessageTransport.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "core/status.h"
#include "network/backend.h"
#include "network/topology.h"
#include "system/chunk.h"
#include "system/chunk_context.h"
#include "system/chunk_store.h"
#include "system/comm_group.h"
#include "system/message_transport.h"
#include "system/npu_sys.h"
#include "system/options.h"
#include "system/rank_class_map.h"
#include "system/rooted_collectives.h"
#include "system/tag.h"

namespace orrery {

class CollectiveEngine;

// A collective in flight on one NPU: its handle, and the client to tell when it
// completes. Owned by the engine (so a run that stops early frees it too) and
// recycled after completion: no allocation per collective in steady state.
class HandleOwner : public CollectiveDoneClient {
 public:
  void OnCollectiveDone(uint64_t) override;
  CollectiveHandle handle;
  CollectiveDoneClient* inner = nullptr;
  uint64_t cookie = 0;
  uint32_t slot = 0;
  CollectiveEngine* engine = nullptr;
};

class CollectiveEngine : public EventHandler {
 public:
  static constexpr uint32_t kDelivered = 1;
  // Messages with this tag only notify their sender's `on_sent` client (used
  // to carry memory traffic over the network); they are never matched.
  static constexpr uint64_t kRawTagBit = tags::kRaw;
  // Test hook: every rank's chunk numbers start here (tests cross 2^24 without 2^24 chunks).
  static inline uint64_t first_chunk_number_for_test = 0;
  // Tests: false leaves every chunk and algorithm to the pool (no rank arenas).
  static inline bool place_by_rank_for_test = true;

  // `mirror`: a symmetric run that simulates rank 0 only (see SymmetricRunReason).
  CollectiveEngine(EventQueue* queue, const Topology* topology, SystemOptions options, bool mirror = false);
  bool mirror() const { return mirror_; }
  // Rank classes (system/rank_class_map.h): only the representatives are
  // simulated; a message to a member of the sender's own class is mirrored,
  // every other message goes between representatives. Null: no classes.
  void SetRankClasses(const RankClassMap* classes);
  void SetBackend(NetworkBackend* backend) { transport_.SetBackend(backend); }
  // Observers of collective phases (the critical path's recorder, the timeline); none by default.
  void AddPhaseObserver(PhaseObserver* observer) { phase_observers_.push_back(observer); }
  Status Validate() const;

  // Registers a communicator group; returns its index.
  Result<int> AddCommGroup(const std::string& name, std::vector<int> ranks);
  const CommGroup& group(int g) const { return groups_[g]; }
  int num_groups() const { return static_cast<int>(groups_.size()); }

  // Starts a collective on `rank`; the client hears OnCollectiveDone(cookie).
  // `stream`: the communication stream (0 .. kMaxCommStreams - 1) whose queues
  // its chunks wait in (system/npu_sys.h).
  Status IssueCollective(int rank, ComType type, uint64_t bytes, const std::vector<bool>& involved, int group,
                         CollectiveDoneClient* client, uint64_t cookie, std::string* algorithm_used, int stream = 0);
  // BROADCAST, REDUCE, SCATTER, GATHER, BARRIER (see system/rooted_collectives.h).
  Status IssueRooted(int rank, RootedKind kind, uint64_t bytes, int root, int group, CollectiveDoneClient* client,
                     uint64_t cookie, std::string* algorithm_used, int stream = 0);
  // Point-to-point messages (COMM_SEND / COMM_RECV), tagged by the trace's tag.
  // The sender hears on_sent->OnRecv(sent_cookie) when the message is delivered.
  void SendP2P(int src, int dst, uint64_t bytes, uint64_t tag, RecvClient* on_sent, uint64_t sent_cookie);
  void PostRecvP2P(int dst, int src, uint64_t tag, RecvClient* client, uint64_t cookie);
  // Where a point-to-point message is matched, as (simulated rank, peer as that
  // rank's receive names it): the pair SendP2P(src, dst) delivers to, and the
  // pair PostRecvP2P(dst, src) waits on (rank classes map both; equal pairs
  // with equal tags match).
  std::pair<int, int> SendMatchKey(int src, int dst) const;
  std::pair<int, int> RecvMatchKey(int dst, int src) const { return {dst, transport_.SimulatedPeer(dst, src)}; }

  // A message outside any collective (memory traffic with kRawTagBit); `tag`
  // as system/tag.h defines it. The sender hears on_sent->OnRecv(sent_cookie).
  void SendMessage(int src, int dst, uint64_t bytes, uint64_t tag, RecvClient* on_sent = nullptr,
                   uint64_t sent_cookie = 0) {
    transport_.Send(src, dst, bytes, tag, 0, on_sent, sent_cookie);
  }
  EventQueue* queue() const { return queue_; }
  const SystemOptions& options() const { return options_; }
  const Topology& topology() const { return *topology_; }
  // A fresh handle for a collective that tells `client` when it completes.
  CollectiveHandle* NewHandle(CollectiveDoneClient* client, uint64_t cookie);
  void FreeHandle(uint32_t slot) { free_handles_.push_back(slot); }
  NpuSys& npu(int rank) { return *npus_[rank]; }
  int npus() const { return static_cast<int>(npus_.size()); }

  void HandleEvent(uint32_t kind, uint64_t token) override;

  uint64_t messages_sent() const { return transport_.messages_sent(); }
  // The rank classes set by SetRankClasses, or null.
  const RankClassMap* rank_classes() const { return classes_; }
  // With rank classes: messages and per-dimension traffic counted for every
  // member of the sending class (the backend saw the representative's only).
  uint64_t class_messages() const { return transport_.class_messages(); }
  const std::vector<DimStats>& class_extra_stats() const { return transport_.class_extra_stats(); }
  // In-switch collectives' traffic, per dimension.
  const std::vector<DimStats>& switch_stats() const { return transport_.switch_stats(); }

 private:
  int MirroredSender(int src, int dst) const;  // rank classes: see SendP2P
  // The collective's chunks on `rank`, each a list of phases
  // (system/collective_planner.cc).
  class Planner;
  Result<std::vector<std::vector<PhaseSpec>>> Plan(int rank, ComType type, uint64_t bytes,
                                                   const std::vector<bool>& involved, int group,
                                                   std::string* algorithm_used);
  // The ring of dimension `dim` through `rank` (every NPU for the one* algorithms).
  RingView DimRing(int rank, int dim, const AlgoSpec& algo) const;
  // The event queue's prefetcher for the engine's deliveries (`ctx`: the engine).
  static void PrefetchDelivery(void* ctx, uint64_t token, int stage);
  // A built-in algorithm's message (sub 0, no sender to tell, not point-to-point
  // or transport only) goes straight to the receiving chunk when it is in the
  // directory: that chunk, or nullptr (the NPU's match table takes it).
  Chunk* DirectoryReceiver(const MessageTransport::Msg& m) {
    if (m.sub != 0 || m.on_sent || (m.tag & (tags::kPointToPoint | tags::kRaw))) return nullptr;
    return store_.Receiver(m.tag, m.dst);
  }

  EventQueue* queue_;
  const Topology* topology_;
  bool mirror_ = false;
  const RankClassMap* classes_ = nullptr;
  SystemOptions options_;
  MessageTransport transport_;
  std::vector<PhaseObserver*> phase_observers_;
  ChunkContext ctx_;  // what NpuSys, its chunks and their algorithms see of the world
  std::vector<std::unique_ptr<NpuSys>> npus_;
  std::vector<CommGroup> groups_;
  // The next chunk number: [0][rank] without a group, [g+1][position of the rank in g]
  // (O(NPUs + groups x members), not groups x NPUs).
  std::vector<std::vector<uint64_t>> chunk_counters_;
  // Null when `rank` is not in `group`; *pos: the rank's position in the group.
  uint64_t* ChunkCounter(int group, int rank, int* pos);
  std::vector<AlgoSpec> default_impl_;  // ring on every dimension, when a type has no implementation configured
  // [rank * dims + dim]: the double-binary-tree phases planned there (odd or even: which of the two trees)
  std::vector<int> dbt_phases_;
  std::vector<std::unique_ptr<HandleOwner>> handles_;
  std::vector<uint32_t> free_handles_;
  ChunkStore store_;  // after npus_: the chunks go first
};

}  // namespace orrery
