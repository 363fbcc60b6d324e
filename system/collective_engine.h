// Owns the per-NPU system layers, turns collectives into phases, carries
// messages through the network backend and back to the receiver's matcher.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/status.h"
#include "network/backend.h"
#include "network/topology.h"
#include "system/npu_sys.h"
#include "system/options.h"
#include "system/rank_class_map.h"
#include "system/rooted_collectives.h"
#include "system/stream_directory.h"
#include "system/tag.h"

namespace orrery {

struct CommGroup {
  int id = -1;
  std::string name;
  std::vector<int> ranks;         // sorted
  bool aligned = false;           // exactly the NPUs of some whole dimensions
  std::vector<bool> dims;         // for aligned groups: the dimensions it spans
};

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
  // Test hook: every rank's stream numbers start here (tests cross 2^24 without 2^24 streams).
  static inline uint64_t first_stream_number_for_test = 0;

  // `mirror`: a symmetric run that simulates rank 0 only (see SymmetricRunReason).
  CollectiveEngine(EventQueue* queue, const Topology* topology, SystemOptions options, bool mirror = false);
  bool mirror() const { return mirror_; }
  // Rank classes (system/rank_class_map.h): only the representatives are
  // simulated; a message to a member of the sender's own class is mirrored,
  // every other message goes between representatives. Null: no classes.
  void SetRankClasses(const RankClassMap* classes);
  // True when `peer` does what `rank` does at the same time (a symmetric run,
  // or both in one rank class): its message to `rank` is modelled at the receive.
  bool Mirrored(int rank, int peer) const { return mirror_ || (classes_ && classes_->SameClass(rank, peer)); }
  // The simulated rank that stands for `peer` when `rank` exchanges with it (RankClassMap::Simulated).
  int SimulatedPeer(int rank, int peer) const { return classes_ ? classes_->Simulated(rank, peer) : peer; }
  void SetBackend(NetworkBackend* backend) { backend_ = backend; }
  // Observers of collective phases (the critical path's recorder, the timeline); none by default.
  void AddPhaseObserver(PhaseObserver* observer) { phase_observers_.push_back(observer); }
  const std::vector<PhaseObserver*>& phase_observers() const { return phase_observers_; }
  Status Validate() const;

  // Registers a communicator group; returns its index.
  Result<int> AddCommGroup(const std::string& name, std::vector<int> ranks);
  const CommGroup& group(int g) const { return groups_[g]; }
  int num_groups() const { return static_cast<int>(groups_.size()); }

  // Starts a collective on `rank`; the client hears OnCollectiveDone(cookie).
  Status IssueCollective(int rank, ComType type, uint64_t bytes, std::vector<bool> involved, int group,
                         CollectiveDoneClient* client, uint64_t cookie, std::string* algorithm_used);
  // BROADCAST, REDUCE, SCATTER, GATHER, BARRIER (see system/rooted_collectives.h).
  Status IssueRooted(int rank, RootedKind kind, uint64_t bytes, int root, int group, CollectiveDoneClient* client,
                     uint64_t cookie, std::string* algorithm_used);
  // Point-to-point messages (COMM_SEND / COMM_RECV), tagged by the trace's tag.
  // The sender hears on_sent->OnRecv(sent_cookie) when the message is delivered.
  void SendP2P(int src, int dst, uint64_t bytes, uint64_t tag, RecvClient* on_sent, uint64_t sent_cookie);
  void PostRecvP2P(int dst, int src, uint64_t tag, RecvClient* client, uint64_t cookie);

  // Used by streams and algorithms.
  // `tag` and `sub` as system/tag.h defines them.
  void SendMessage(int src, int dst, uint64_t bytes, uint64_t tag, uint64_t sub, RecvClient* on_sent,
                   uint64_t sent_cookie);
  void SendMessage(int src, int dst, uint64_t bytes, uint64_t tag, RecvClient* on_sent = nullptr,
                   uint64_t sent_cookie = 0) {
    SendMessage(src, dst, bytes, tag, 0, on_sent, sent_cookie);
  }
  EventQueue* queue() const { return queue_; }
  const SystemOptions& options() const { return options_; }
  const Topology& topology() const { return *topology_; }
  Tick ReduceCost(uint64_t bytes) const;
  // A fresh handle for a collective that tells `client` when it completes.
  CollectiveHandle* NewHandle(CollectiveDoneClient* client, uint64_t cookie);
  void FreeHandle(uint32_t slot) { free_handles_.push_back(slot); }
  void Retire(std::unique_ptr<Algorithm> a) { dead_algos_.push_back(std::move(a)); }
  void Retire(std::unique_ptr<Stream> s) { dead_streams_.push_back(std::move(s)); }
  void CollectGarbage() {
    if (!dead_algos_.empty()) dead_algos_.clear();
    if (!dead_streams_.empty()) dead_streams_.clear();
  }
  Stream* Adopt(std::unique_ptr<Stream> s);
  void Release(Stream* s);
  NpuSys& npu(int rank) { return *npus_[rank]; }
  int npus() const { return static_cast<int>(npus_.size()); }

  void HandleEvent(uint32_t kind, uint64_t token) override;

  uint64_t messages_sent() const { return messages_sent_; }
  // With rank classes: messages and per-dimension traffic counted for every
  // member of the sending class (the backend saw the representative's only).
  uint64_t class_messages() const { return class_messages_; }
  const std::vector<DimStats>& class_extra_stats() const { return class_extra_; }

  // In-switch collectives: a member's upload reached the switch of its group;
  // when all `members` have, every waiting algorithm hears OnSwitchReady().
  void SwitchArrive(uint64_t tag, int group_base, int dim, int members, Algorithm* waiter);
  void CountSwitchTraffic(int dim, uint64_t bytes) {
    switch_stats_[dim].messages++;
    switch_stats_[dim].bytes += bytes;
  }
  const std::vector<DimStats>& switch_stats() const { return switch_stats_; }

 private:
  Result<std::vector<std::vector<PhaseSpec>>> Plan(int rank, ComType type, uint64_t bytes,
                                                   const std::vector<bool>& involved, int group,
                                                   std::string* algorithm_used);
  RingView DimRing(int rank, int dim, const AlgoSpec& algo) const;
  // A rank's position among the members of a stream tag's group (its rank
  // without a group): the index of StreamDirectory.
  int DirectoryPos(uint64_t tag, int rank) const {
    const int g = static_cast<int>((tag >> tags::kStreamBits) & ((uint64_t{1} << 22) - 1)) - 1;
    if (g < 0) return rank;
    const std::vector<int>& m = groups_[g].ranks;
    return static_cast<int>(std::lower_bound(m.begin(), m.end(), rank) - m.begin());
  }
  static void PrefetchDelivery(void* ctx, uint64_t token, int stage);
  // The directory serves the full engine; symmetric and rank-class runs keep
  // every message on the match tables (a mirrored message has no real sender).
  bool directory_on() const { return !mirror_ && !classes_; }

  struct Msg {
    int src, dst;
    uint64_t tag, sub;
    RecvClient* on_sent;
    uint64_t sent_cookie;
  };

  EventQueue* queue_;
  const Topology* topology_;
  bool mirror_ = false;
  const RankClassMap* classes_ = nullptr;
  uint64_t class_messages_ = 0;
  std::vector<DimStats> class_extra_, class_before_;  // counts beyond the representative's; scratch
  SystemOptions options_;
  NetworkBackend* backend_ = nullptr;
  std::vector<PhaseObserver*> phase_observers_;
  std::vector<std::unique_ptr<NpuSys>> npus_;
  std::vector<CommGroup> groups_;
  // The next stream number: [0][rank] without a group, [g+1][position of the rank in g]
  // (O(NPUs + groups x members), not groups x NPUs).
  std::vector<std::vector<uint64_t>> stream_counters_;
  uint64_t* StreamCounter(int group, int rank);
  std::vector<int> dbt_counter_;                        // [rank * dims + dim]: alternates the two trees
  std::vector<Msg> msgs_;
  std::vector<uint32_t> free_msgs_;
  std::vector<std::unique_ptr<HandleOwner>> handles_;
  std::vector<uint32_t> free_handles_;
  std::vector<std::unique_ptr<Algorithm>> dead_algos_;
  std::vector<std::unique_ptr<Stream>> dead_streams_;
  std::vector<std::unique_ptr<Stream>> live_streams_;
  std::vector<uint32_t> free_stream_slots_;
  uint64_t messages_sent_ = 0;
  StreamDirectory directory_;
  struct Rendezvous {
    int arrived = 0;
    std::vector<Algorithm*> waiters;
  };
  std::map<std::tuple<uint64_t, int, int>, Rendezvous> rendezvous_;
  std::vector<DimStats> switch_stats_;
};

}  // namespace orrery
