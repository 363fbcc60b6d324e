// Send/receive matching for one NPU, keyed by (tag, sub, source) (system/tag.h). A flat
// open-addressing table: no allocation per message, one probe sequence per
// lookup. A receive waiting for a message that has not arrived holds the
// slot; more waiters on the same key (rare) queue in an overflow list in
// posting order. A slot is removed the moment it settles (nothing arrived,
// nobody waiting), by backward-shift deletion, so the table holds only live
// keys: a few per NPU, which keeps it small and in cache; Sweep() shrinks a
// table left sparse after a burst.
//
// The live keys of one (tag, sub) are also chained in a doubly linked list
// (a pool of nodes; each slot holds its node's index, which stays put when
// the slot moves), so a chunk that starts takes its early arrivals in
// O(its sources), not O(table): a run whose NPUs hold many future chunks'
// arrivals (MoE all-to-alls, CP rings, deep pipelines) stays linear.
//
//   groups_ (tag, sub) -> head ─► node{src} ⇄ node{src} ⇄ ...   (nodes_ pool)
//   slots_  (tag, sub, src) -> {arrived, waiting, client, cookie, node}
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

class RecvClient;

class MatchTable {
 public:
  MatchTable() { slots_.resize(8); }
  // A receive is posted: true when its message is already here (the caller tells the client now).
  bool Post(uint64_t tag, uint64_t sub, int src, RecvClient* client, uint64_t cookie);
  // A message arrived: returns true and fills the waiter to call, false if nobody waits yet.
  bool Arrive(uint64_t tag, uint64_t sub, int src, RecvClient** client, uint64_t* cookie);
  void Sweep();
  size_t size() const { return used_; }
  // Keys chained for (tag, sub) — for tests of the index.
  size_t GroupSize(uint64_t tag, uint64_t sub) const;
  // Removes every key (tag, sub, *) that holds arrived messages and nobody
  // waiting, appending (source, count) to `out` in ascending source order (a
  // chunk that starts after some of its messages came takes them into its
  // Mailbox). O(live keys of (tag, sub)).
  void TakeArrived(uint64_t tag, uint64_t sub, std::vector<std::pair<int, uint32_t>>* out);
  template <typename F>
  void ForEachArrived(F f) const {
    for (const Slot& s : slots_) {
      if (s.src >= 0 && s.arrived > 0) f(s.tag, s.src, s.arrived);
    }
  }
  template <typename F>
  void ForEachWaiting(F f) const {
    for (const Slot& s : slots_) {
      if (s.src >= 0 && s.waiting > 0) f(s.tag, s.src, s.waiting);
    }
  }

 private:
  struct Slot {
    uint64_t tag = 0;
    uint64_t sub = 0;
    int32_t src = -1;  // -1: empty
    uint32_t arrived = 0;
    uint32_t waiting = 0;
    int32_t node = -1;  // this key's node in nodes_
    RecvClient* client = nullptr;
    uint64_t cookie = 0;
  };
  // One (tag, sub) with live keys: the head of its chain of nodes.
  struct Group {
    uint64_t tag = 0;
    uint64_t sub = 0;
    int32_t head = -1;  // -1: empty slot of groups_
  };
  struct Node {
    int32_t src;
    int32_t prev;
    int32_t next;  // -1 ends the chain; a free node's next is the next free one
  };
  struct Overflow {
    uint64_t tag;
    uint64_t sub;
    int32_t src;
    RecvClient* client;
    uint64_t cookie;
  };
  Slot& Find(uint64_t tag, uint64_t sub, int src);
  const Slot* Lookup(uint64_t tag, uint64_t sub, int src) const;  // no insertion
  void Grow();
  void Erase(Slot* s);  // backward-shift deletion of a settled slot
  // The chains: a key joins its group when its slot is made, leaves when erased.
  int32_t Link(uint64_t tag, uint64_t sub, int src);
  void Unlink(uint64_t tag, uint64_t sub, int32_t node);
  Group* FindGroup(uint64_t tag, uint64_t sub);
  Group& InsertGroup(uint64_t tag, uint64_t sub);
  void EraseGroup(Group* g);
  void RehashGroups(size_t cap);
  static size_t GroupHash(uint64_t tag, uint64_t sub) {  // a full 64-bit mix (MurmurHash3's finaliser)
    uint64_t h = tag ^ (sub * 0x9E3779B97F4A7C15ull);
    h = (h ^ (h >> 33)) * 0xFF51AFD7ED558CCDull;
    h = (h ^ (h >> 33)) * 0xC4CEB9FE1A85EC53ull;
    return static_cast<size_t>(h ^ (h >> 33));
  }
  static size_t Hash(uint64_t tag, uint64_t sub, int src) {
    uint64_t h = (tag ^ (sub * 0xFF51AFD7ED558CCDull)) * 0x9E3779B97F4A7C15ull ^
                 (static_cast<uint64_t>(src) * 0xC2B2AE3D27D4EB4Full);
    return static_cast<size_t>(h ^ (h >> 29));
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;  // every used slot is live: a message or a receive pending
  std::vector<Overflow> overflow_;
  std::vector<Group> groups_ = std::vector<Group>(8);
  size_t groups_used_ = 0;
  std::vector<Node> nodes_;
  int32_t free_node_ = -1;
  std::vector<int32_t> taken_;  // TakeArrived's scratch: the sources it takes
};

// The receives of one collective chunk of a built-in algorithm (ring,
// halving-doubling, double binary tree), where every waiter is the chunk
// itself: a signed count per source is the whole state (> 0: messages here,
// < 0: receives waiting). Such a chunk talks to a few sources at a time, so a
// short flat list (two inline, spilling to the heap) with settled entries
// removed at once; O(live sources) per operation, a small constant for
// these algorithms. Laid out to fill the rest of the chunk's first cache line.
class Mailbox {
 public:
  // The chunk receives here (it is in the engine's directory), not in its NPU's table.
  bool on() const { return on_; }
  void TurnOn() { on_ = true; }
  // A receive from `src` is posted: true when its message was already here (taken).
  bool Post(int src) { return Step(src, -1); }
  // A message from `src` arrived: true when a receive was waiting for it (taken).
  bool Arrive(int src) { return Step(src, +1); }
  // `n` messages that arrived before the chunk started.
  void AddArrived(int src, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) Step(src, +1);
  }
  template <typename F>
  void ForEachWaiting(F f) const {
    for (uint32_t i = 0; i < size_; ++i) {
      const Slot& s = At(i);
      if (s.count < 0) f(s.src, static_cast<uint32_t>(-s.count));
    }
  }

 private:
  struct Slot {
    int32_t src;
    int32_t count;
  };
  static constexpr uint32_t kInline = 2;
  Slot& At(uint32_t i) { return i < kInline ? inline_[i] : spill_[i - kInline]; }
  const Slot& At(uint32_t i) const { return i < kInline ? inline_[i] : spill_[i - kInline]; }
  // +1 an arrival, -1 a receive: true when it settles one of the other kind.
  // Inline, the common case: every entry in inline_ and no new one to
  // spill (it makes no call, so the chunk code it is inlined into needs no
  // saved registers for it); StepSpilled, the same for every case.
  bool Step(int src, int32_t d) {
    if (size_ > kInline) return StepSpilled(src, d);
    for (uint32_t i = 0; i < size_; ++i) {
      Slot& s = inline_[i];
      if (s.src != src) continue;
      const bool settles = (s.count > 0) != (d > 0);
      s.count += d;
      if (s.count == 0) s = inline_[--size_];  // settled: the last entry fills the hole
      return settles;
    }
    if (size_ == kInline) return StepSpilled(src, d);
    inline_[size_++] = Slot{src, d};
    return false;
  }
  __attribute__((noinline)) bool StepSpilled(int src, int32_t d);
  uint32_t size_ = 0;
  Slot inline_[kInline];
  bool on_ = false;
  std::vector<Slot> spill_;
};

}  // namespace orrery
