// The way out of an NPU: a message (a collective's, a point-to-point one, or
// memory traffic) gets a slot here and goes to the network backend; when the
// backend reports it delivered, the engine takes the slot back (Take) and hands
// the message to its receiver. In a symmetric run or with rank classes this is
// also where a message to an unsimulated rank is redirected and counted for its
// whole class. In-switch collectives meet here at their switch (SwitchArrive).
// It knows nothing of chunks or the engine: one way, NPU -> network.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "core/event_queue.h"
#include "core/huge_pages.h"
#include "network/backend.h"
#include "network/fixed_delay.h"
#include "network/topology.h"
#include "system/rank_class_map.h"

namespace orrery {

class RecvClient;

// An in-switch collective's member waiting for every member's upload.
class SwitchWaiter {
 public:
  virtual ~SwitchWaiter() = default;
  virtual void OnSwitchReady() = 0;
};

class MessageTransport {
 public:
  struct Msg {
    int src, dst;
    uint64_t tag, sub;
    RecvClient* on_sent;
    uint64_t sent_cookie;
  };

  // `mirror`: a symmetric run that simulates rank 0 only.
  MessageTransport(EventQueue* queue, const Topology* topology, bool mirror);
  void SetBackend(NetworkBackend* backend) {
    backend_ = backend;
    fixed_ = dynamic_cast<FixedDelayBackend*>(backend);
    DecidePaths();
  }
  // Rank classes (system/rank_class_map.h): only the representatives are
  // simulated; a message to a member of the sender's own class is mirrored,
  // every other message goes between representatives. Null: no classes.
  void SetRankClasses(const RankClassMap* classes);

  // True when `peer` does what `rank` does at the same time (a symmetric run,
  // or both in one rank class): its message to `rank` is modelled at the receive.
  bool Mirrored(int rank, int peer) const { return mirror_ || (classes_ && classes_->SameClass(rank, peer)); }
  // False when every rank is simulated and sends for itself (no symmetry, no
  // rank classes): then Mirrored is false and SimulatedPeer the peer itself.
  bool redirects() const { return redirects_; }
  // The simulated rank that stands for `peer` when `rank` exchanges with it (RankClassMap::Simulated).
  int SimulatedPeer(int rank, int peer) const { return classes_ ? classes_->Simulated(rank, peer) : peer; }

  // Hands a message to the backend; `tag` and `sub` as system/tag.h defines
  // them. The sender hears on_sent->OnRecv(sent_cookie) when it is delivered.
  void Send(int src, int dst, uint64_t bytes, uint64_t tag, uint64_t sub, RecvClient* on_sent, uint64_t sent_cookie);
  // True when the backend knows a message's delay when it is sent
  // (network/fixed_delay.h) and nothing redirects messages (redirects()):
  // SendDirect may then be used.
  bool direct() const { return direct_; }
  // The backend's route from `src` to `dst` when they differ in one
  // dimension, else nullptr. Only when direct().
  FixedRoute* RouteOf(int src, int dst) { return fixed_->RouteOf(src, dst); }
  // A built-in algorithm's message whose receiver is known now: the backend
  // counts it and gives its delay (through `route`, RouteOf(src, dst), when
  // not null), and the delivery is scheduled straight to `to` as
  // to->HandleEvent(kind, arg), with no slot. Only when direct().
  void SendDirect(int src, int dst, uint64_t bytes, FixedRoute* route, EventHandler* to, uint32_t kind, uint64_t arg) {
    ++messages_sent_;
    queue_->ScheduleAfter(route ? route->Charge(bytes) : fixed_->Delay(src, dst, bytes), to, kind, arg);
  }
  // The delivered message in `slot` (the backend's token); the slot is free again.
  Msg Take(uint64_t slot) {
    const Msg m = msgs_[slot];
    free_msgs_.push_back(static_cast<uint32_t>(slot));
    return m;
  }
  // The message in `slot` for a prefetch, or nullptr.
  const Msg* Peek(uint64_t slot) const { return slot < msgs_.size() ? &msgs_[slot] : nullptr; }

  uint64_t messages_sent() const { return messages_sent_; }
  // With rank classes: messages and per-dimension traffic counted for every
  // member of the sending class (the backend saw the representative's only).
  uint64_t class_messages() const { return class_messages_; }
  const std::vector<DimStats>& class_extra_stats() const { return class_extra_; }

  // In-switch collectives: a member's upload reached the switch of its group;
  // when all `members` have, every waiter hears OnSwitchReady().
  void SwitchArrive(uint64_t tag, int group_base, int dim, int members, SwitchWaiter* waiter);
  void CountSwitchTraffic(int dim, uint64_t bytes) {
    switch_stats_[dim].messages++;
    switch_stats_[dim].bytes += bytes;
  }
  const std::vector<DimStats>& switch_stats() const { return switch_stats_; }

 private:
  // redirects_ and direct_ from mirror_, classes_ and fixed_ (kept as flags:
  // every send and receive reads them).
  void DecidePaths() {
    redirects_ = mirror_ || classes_ != nullptr;
    direct_ = fixed_ != nullptr && !redirects_;
  }

  EventQueue* queue_;
  const Topology* topology_;
  bool mirror_;
  bool redirects_ = false;  // DecidePaths
  bool direct_ = false;     // DecidePaths
  const RankClassMap* classes_ = nullptr;
  NetworkBackend* backend_ = nullptr;
  FixedDelayBackend* fixed_ = nullptr;             // backend_, when it is one
  std::vector<Msg, HugePageAllocator<Msg>> msgs_;  // read at random at 16K NPUs: huge pages
  std::vector<uint32_t> free_msgs_;
  uint64_t messages_sent_ = 0;
  uint64_t class_messages_ = 0;
  std::vector<DimStats> class_extra_, class_before_;  // counts beyond the representative's; scratch
  struct Rendezvous {
    int arrived = 0;
    std::vector<SwitchWaiter*> waiters;
  };
  std::map<std::tuple<uint64_t, int, int>, Rendezvous> rendezvous_;
  std::vector<DimStats> switch_stats_;
};

}  // namespace orrery
