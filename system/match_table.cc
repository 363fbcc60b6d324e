#include "system/match_table.h"

#include <algorithm>

#include "core/status.h"

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
      s.node = Link(tag, sub, src);
      ++used_;
      return s;
    }
    if (s.tag == tag && s.sub == sub && s.src == src) return s;
    i = (i + 1) & mask;
  }
}

const MatchTable::Slot* MatchTable::Lookup(uint64_t tag, uint64_t sub, int src) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Hash(tag, sub, src) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.src < 0) return nullptr;
    if (s.tag == tag && s.sub == sub && s.src == src) return &s;
  }
}

MatchTable::Group* MatchTable::FindGroup(uint64_t tag, uint64_t sub) {
  const size_t mask = groups_.size() - 1;
  for (size_t i = GroupHash(tag, sub) & mask;; i = (i + 1) & mask) {
    Group& g = groups_[i];
    if (g.head < 0) return nullptr;
    if (g.tag == tag && g.sub == sub) return &g;
  }
}

MatchTable::Group& MatchTable::InsertGroup(uint64_t tag, uint64_t sub) {
  if ((groups_used_ + 1) * 2 > groups_.size()) RehashGroups(groups_.size() * 2);
  const size_t mask = groups_.size() - 1;
  size_t i = GroupHash(tag, sub) & mask;
  while (groups_[i].head >= 0) i = (i + 1) & mask;
  Group& g = groups_[i];
  g.tag = tag;
  g.sub = sub;
  ++groups_used_;
  return g;
}

void MatchTable::RehashGroups(size_t cap) {
  std::vector<Group> old;
  old.swap(groups_);
  groups_.assign(cap, Group());
  const size_t mask = cap - 1;
  for (const Group& g : old) {
    if (g.head < 0) continue;
    size_t i = GroupHash(g.tag, g.sub) & mask;
    while (groups_[i].head >= 0) i = (i + 1) & mask;
    groups_[i] = g;
  }
}

void MatchTable::EraseGroup(Group* g) {  // backward-shift deletion, as Erase
  const size_t mask = groups_.size() - 1;
  size_t hole = static_cast<size_t>(g - groups_.data());
  for (size_t j = (hole + 1) & mask; groups_[j].head >= 0; j = (j + 1) & mask) {
    const size_t home = GroupHash(groups_[j].tag, groups_[j].sub) & mask;
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    groups_[hole] = groups_[j];
    hole = j;
  }
  groups_[hole] = Group();
  --groups_used_;
}

int32_t MatchTable::Link(uint64_t tag, uint64_t sub, int src) {
  int32_t n = free_node_;
  if (n >= 0) {
    free_node_ = nodes_[static_cast<size_t>(n)].next;
  } else {
    n = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(Node());
  }
  Group* g = FindGroup(tag, sub);
  if (g == nullptr) g = &InsertGroup(tag, sub);
  const int32_t head = g->head;
  nodes_[static_cast<size_t>(n)] = Node{src, -1, head};
  if (head >= 0) nodes_[static_cast<size_t>(head)].prev = n;
  g->head = n;
  return n;
}

void MatchTable::Unlink(uint64_t tag, uint64_t sub, int32_t n) {
  Node& node = nodes_[static_cast<size_t>(n)];
  if (node.next >= 0) nodes_[static_cast<size_t>(node.next)].prev = node.prev;
  if (node.prev >= 0) {
    nodes_[static_cast<size_t>(node.prev)].next = node.next;
  } else {
    Group* g = FindGroup(tag, sub);
    ORRERY_CHECK(g != nullptr && g->head == n, "match table: a key's group lost its chain");
    g->head = node.next;
    if (g->head < 0) EraseGroup(g);
  }
  node.next = free_node_;
  free_node_ = n;
}

size_t MatchTable::GroupSize(uint64_t tag, uint64_t sub) const {
  const size_t mask = groups_.size() - 1;
  for (size_t i = GroupHash(tag, sub) & mask;; i = (i + 1) & mask) {
    const Group& g = groups_[i];
    if (g.head < 0) return 0;
    if (g.tag != tag || g.sub != sub) continue;
    size_t n = 0;
    for (int32_t k = g.head; k >= 0; k = nodes_[static_cast<size_t>(k)].next) ++n;
    return n;
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
  Unlink(s->tag, s->sub, s->node);
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
  const Group* g = FindGroup(tag, sub);
  if (g == nullptr) return;
  taken_.clear();
  for (int32_t k = g->head; k >= 0; k = nodes_[static_cast<size_t>(k)].next) {
    const int src = nodes_[static_cast<size_t>(k)].src;
    const Slot* s = Lookup(tag, sub, src);
    if (s->arrived > 0 && s->waiting == 0) taken_.push_back(src);
  }
  std::sort(taken_.begin(), taken_.end());  // the chain's order is the order keys came
  for (int src : taken_) {
    Slot* s = const_cast<Slot*>(Lookup(tag, sub, src));
    out->emplace_back(src, s->arrived);
    Erase(s);
  }
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
  size_t group_cap = 8;
  while (group_cap < groups_used_ * 4) group_cap *= 2;
  if (group_cap < groups_.size()) RehashGroups(group_cap);
  if (used_ == 0) {  // nothing live: the node pool starts over
    nodes_.clear();
    free_node_ = -1;
  }
}

}  // namespace orrery
