#include "system/match_table.h"

namespace orrery {

bool Mailbox::StepSpilled(int src, int32_t d) {
  for (uint32_t i = 0; i < size_; ++i) {
    Slot& s = At(i);
    if (s.src != src) continue;
    const bool settles = (s.count > 0) != (d > 0);
    s.count += d;
    if (s.count == 0) {  // settled: the last entry fills the hole
      s = At(size_ - 1);
      if (--size_ >= kInline) spill_.pop_back();
    }
    return settles;
  }
  if (size_ < kInline) {
    inline_[size_] = Slot{src, d};
  } else {
    spill_.push_back(Slot{src, d});
  }
  ++size_;
  return false;
}

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

void MatchTable::Erase(Slot* s) {
  const size_t mask = slots_.size() - 1;
  size_t hole = static_cast<size_t>(s - slots_.data());
  size_t j = hole;
  while (true) {
    j = (j + 1) & mask;
    Slot& next = slots_[j];
    if (next.src < 0) break;
    // `next` may fill the hole unless its home lies cyclically in (hole, j].
    const size_t home = Hash(next.tag, next.sub, next.src) & mask;
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots_[hole] = next;
    hole = j;
  }
  slots_[hole] = Slot();
  --used_;
}

bool MatchTable::Post(uint64_t tag, uint64_t sub, int src, RecvClient* client, uint64_t cookie) {
  Slot& s = Find(tag, sub, src);
  if (s.arrived > 0) {
    if (--s.arrived == 0 && s.waiting == 0) Erase(&s);
    return true;
  }
  if (s.waiting++ == 0) {
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
    s.arrived++;
    return false;
  }
  *client = s.client;
  *cookie = s.cookie;
  if (--s.waiting == 0) {
    if (s.arrived == 0) Erase(&s);
    return true;
  }
  for (size_t i = 0; i < overflow_.size(); ++i) {
    if (overflow_[i].tag == tag && overflow_[i].sub == sub && overflow_[i].src == src) {
      s.client = overflow_[i].client;
      s.cookie = overflow_[i].cookie;
      overflow_.erase(overflow_.begin() + static_cast<long>(i));
      break;
    }
  }
  return true;
}

void MatchTable::TakeArrived(uint64_t tag, uint64_t sub, std::vector<std::pair<int, uint32_t>>* out) {
  const size_t first = out->size();
  for (const Slot& s : slots_) {
    if (s.src >= 0 && s.tag == tag && s.sub == sub && s.arrived > 0 && s.waiting == 0) {
      out->emplace_back(s.src, s.arrived);
    }
  }
  for (size_t i = first; i < out->size(); ++i) Erase(&Find(tag, sub, (*out)[i].first));
}

void MatchTable::Sweep() {
  // Every used slot is live; shrink a table that a burst left at most 1/8 full.
  if (slots_.size() <= 8 || used_ * 8 > slots_.size()) return;
  std::vector<Slot> old;
  old.swap(slots_);
  size_t cap = 8;
  while (cap < used_ * 4) cap *= 2;
  slots_.assign(cap, Slot());
  const size_t mask = cap - 1;
  for (const Slot& s : old) {
    if (s.src < 0) continue;
    size_t i = Hash(s.tag, s.sub, s.src) & mask;
    while (slots_[i].src >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

}  // namespace orrery
