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
#include <vector>

namespace orrery {

class RecvClient;

class MatchTable {
 public:
  MatchTable() { slots_.resize(8); }
  // A receive is posted: returns the waiter to call now (message already here) or nullptr.
  bool Post(uint64_t tag, uint64_t sub, int src, RecvClient* client, uint64_t cookie);
  // A message arrived: returns true and fills the waiter to call, false if nobody waits yet.
  bool Arrive(uint64_t tag, uint64_t sub, int src, RecvClient** client, uint64_t* cookie);
  void Sweep();
  size_t size() const { return used_; }
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

}  // namespace orrery
