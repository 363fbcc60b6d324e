#include "system/match_table.h"

namespace orrery {

MatchTable::Slot& MatchTable::Find(uint64_t tag, uint64_t sub, int src) {
  if ((used_ + 1) * 2 > slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  size_t i = Hash(tag, sub, src) & mask;
  while (true) {
    Slot& s = slots_[i];
    if (s.src < 0) {
      s.tag = tag;
      s.sub = sub;
      s.src = src;
      ++used_;
      return s;
    }
    if (s.tag == tag && s.sub == sub && s.src == src) return s;
    i = (i + 1) & mask;
  }
}

void MatchTable::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot());
  used_ = 0;
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.src < 0) continue;
    size_t i = Hash(s.tag, s.sub, s.src) & mask;
    while (slots_[i].src >= 0) i = (i + 1) & mask;
    slots_[i] = s;
    ++used_;
  }
}

bool MatchTable::Post(uint64_t tag, uint64_t sub, int src, RecvClient* client, uint64_t cookie) {
  Slot& s = Find(tag, sub, src);
  if (s.arrived > 0) {
    if (--s.arrived == 0 && s.waiting == 0) --live_;
    return true;
  }
  if (s.waiting++ == 0) {
    if (s.arrived == 0) ++live_;
    s.client = client;
    s.cookie = cookie;
  } else {
    overflow_.push_back(Overflow{tag, sub, src, client, cookie});
  }
  return false;
}

bool MatchTable::Arrive(uint64_t tag, uint64_t sub, int src, RecvClient** client, uint64_t* cookie) {
  Slot& s = Find(tag, sub, src);
  if (s.waiting == 0) {
    if (s.arrived++ == 0) ++live_;
    return false;
  }
  *client = s.client;
  *cookie = s.cookie;
  if (--s.waiting == 0 && s.arrived == 0) --live_;
  if (s.waiting > 0) {
    for (size_t i = 0; i < overflow_.size(); ++i) {
      if (overflow_[i].tag == tag && overflow_[i].sub == sub && overflow_[i].src == src) {
        s.client = overflow_[i].client;
        s.cookie = overflow_[i].cookie;
        overflow_.erase(overflow_.begin() + static_cast<long>(i));
        break;
      }
    }
  }
  return true;
}

void MatchTable::Sweep() {
  // Rebuilding costs O(live): do it only when the settled slots are at least
  // as many as the live ones, so each settled slot pays O(1).
  const size_t live = live_;
  if (used_ - live < 8 || used_ - live < live) return;
  std::vector<Slot> old;
  old.swap(slots_);
  size_t cap = 8;
  while (cap < live * 4) cap *= 2;
  slots_.assign(cap, Slot());
  used_ = 0;
  const size_t mask = cap - 1;
  for (const Slot& s : old) {
    if (s.src < 0 || (!s.arrived && !s.waiting)) continue;
    size_t i = Hash(s.tag, s.sub, s.src) & mask;
    while (slots_[i].src >= 0) i = (i + 1) & mask;
    slots_[i] = s;
    ++used_;
  }
}

}  // namespace orrery
