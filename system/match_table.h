// Send/receive matching for one NPU, keyed by (tag, sub, source) (system/tag.h). A flat
// open-addressing table: no allocation per message, one probe sequence per
// lookup. A receive waiting for a message that has not arrived holds the
// slot; more waiters on the same key (rare) queue in an overflow list in
// posting order. A slot is removed the moment it settles (nothing arrived,
// nobody waiting), by backward-shift deletion, so the table holds only live
// keys: a few per NPU, which keeps it small and in cache; Sweep() shrinks a
// table left sparse after a burst.
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
  // Removes every key (tag, sub, *) that holds arrived messages and nobody
  // waiting, appending (source, count) to `out` (a chunk that starts after
  // some of its messages came takes them into its Mailbox).
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
    RecvClient* client = nullptr;
    uint64_t cookie = 0;
  };
  struct Overflow {
    uint64_t tag;
    uint64_t sub;
    int32_t src;
    RecvClient* client;
    uint64_t cookie;
  };
  Slot& Find(uint64_t tag, uint64_t sub, int src);
  void Grow();
  void Erase(Slot* s);  // backward-shift deletion of a settled slot
  static size_t Hash(uint64_t tag, uint64_t sub, int src) {
    uint64_t h = (tag ^ (sub * 0xFF51AFD7ED558CCDull)) * 0x9E3779B97F4A7C15ull ^
                 (static_cast<uint64_t>(src) * 0xC2B2AE3D27D4EB4Full);
    return static_cast<size_t>(h ^ (h >> 29));
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;  // every used slot is live: a message or a receive pending
  std::vector<Overflow> overflow_;
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
