// Rank classes, steps 2-5 (run/rank_class_decider.h): refine the
// classes by their peers' classes, pick representatives, and check what the
// engine's mirroring relies on.
#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "run/rank_class_decider.h"

namespace orrery {

void ClassDecider::Refine() {
  RankClassMap& m = d_.map;
  m.class_of = graph_class_;
  size_t count = 0;
  for (;;) {
    std::map<std::vector<int32_t>, int32_t> ids;
    std::vector<int32_t> next(npus_);
    std::vector<int32_t> sig;
    for (int r = 0; r < npus_; ++r) {
      sig.assign(1, m.class_of[r]);
      for (uint32_t k = peer_begin_[r]; k < peer_begin_[r + 1]; ++k) sig.push_back(m.class_of[peer_of_[k]]);
      next[r] = ids.emplace(sig, static_cast<int32_t>(ids.size())).first->second;
    }
    m.class_of = std::move(next);
    if (ids.size() == count) break;
    count = ids.size();
  }
  classes_ = static_cast<int>(count);
  if (classes_ >= npus_) {
    d_.note = "every rank is a class of its own";
    return;
  }
  m.rep.assign(classes_, -1);
  m.size.assign(classes_, 0);
  for (int c : m.class_of) m.size[c]++;
  kinds_used_.assign(classes_, {});
}

// Every message between classes is then one between simulated ranks.
Status ClassDecider::PickRepresentatives() {
  RankClassMap& m = d_.map;
  // A flat ring may span classes (its neighbours are peers); then each of them
  // has its representative in the ring the representatives run.
  Frontier f;
  f.spanned.assign(in_.groups->size(), 0);
  for (int seed = 0; seed < npus_; ++seed) {
    if (m.rep[m.class_of[seed]] >= 0) continue;
    m.rep[m.class_of[seed]] = seed;
    f.queue.push_back(seed);
    while (!f.queue.empty()) {
      const int rep = f.queue.front();
      f.queue.pop_front();
      if (Status st = FollowRepresentative(rep, f); !st.ok() || Stopped()) return st;
    }
  }
  return Status::Ok();
}

// Reads representative `rep`'s graph (kept among the representatives') and
// follows its collectives and messages.
Status ClassDecider::FollowRepresentative(int rep, Frontier& f) {
  const auto kept = loaded_.find(rep);
  auto g = kept != loaded_.end() ? Result<NpuGraph>(std::move(kept->second)) : in_.load(rep);
  if (!g.ok()) return g.status();
  d_.note = GraphReason(g.value(), in_.spec->options, shapes_, declared_ != nullptr);
  if (!d_.note.empty()) return Status::Ok();
  for (const WorkNode& n : g->nodes) {
    if (n.kind == NodeKind::kColl) {
      if (n.group >= 0) {
        FollowGroupCollective(rep, n.group, f);
      } else {
        AddSlabMask(g.value(), n);
      }
    } else if (n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv) {
      FollowMessage(rep, n, f);
    }
    if (Stopped()) return Status::Ok();
  }
  d_.rep_graphs.push_back(std::move(g.value()));
  return Status::Ok();
}

// A collective of representative `rep` on `group`: the group is used, its kind
// by `rep`'s class, and a flat ring that spans classes represents them all.
void ClassDecider::FollowGroupCollective(int rep, int group, Frontier& f) {
  RankClassMap& m = d_.map;
  const int c = m.class_of[rep];
  group_used_[group] = 1;
  if (MaySpan(group) && !f.spanned[group]) {
    // Every class in this ring is represented by a member of it (the
    // messages to its other members go there: RankClassMap::Simulated).
    f.spanned[group] = 1;
    const std::vector<int>& ranks = (*in_.groups)[group];
    for (int x : ranks) {
      int& other = m.rep[m.class_of[x]];
      if (other < 0) {
        other = x;
        f.queue.push_back(x);
      } else if (!std::binary_search(ranks.begin(), ranks.end(), other)) {
        d_.note = "rank " + std::to_string(rep) + "'s communicator group " + std::to_string(group) +
                  " spans rank classes, but rank " + std::to_string(other) + ", which represents rank " +
                  std::to_string(x) + "'s class, is not in it";
        return;
      }
    }
  }
  if (std::find(kinds_used_[c].begin(), kinds_used_[c].end(), kind_of_group_[group]) == kinds_used_[c].end()) {
    kinds_used_[c].push_back(kind_of_group_[group]);
  }
}

// The involved dimensions of collective `n` on all NPUs, among slab_masks_.
void ClassDecider::AddSlabMask(const NpuGraph& g, const WorkNode& n) {
  uint32_t mask = 0;
  for (int k = 0; k < t_.num_dims(); ++k) {
    if (n.involved < 0 || k >= static_cast<int>(g.involved[n.involved].size()) || g.involved[n.involved][k]) {
      mask |= 1u << k;
    }
  }
  if (std::find(slab_masks_.begin(), slab_masks_.end(), mask) == slab_masks_.end()) slab_masks_.push_back(mask);
}

// A send or receive of representative `rep`: a peer in another class not yet
// represented becomes its class's representative.
void ClassDecider::FollowMessage(int rep, const WorkNode& n, Frontier& f) {
  RankClassMap& m = d_.map;
  const int c = m.class_of[rep];
  const int p = n.kind == NodeKind::kSend ? n.comm_dst : n.comm_src;
  if (m.class_of[p] == c) return;
  int& other = m.rep[m.class_of[p]];
  if (other < 0) {
    other = p;
    f.queue.push_back(p);
  } else if (other != p && !declared_) {  // a generator's: checked below (CheckCrossClassMessages)
    d_.note = "rank " + std::to_string(rep) + " (representing class " + std::to_string(c) +
              ") exchanges messages "
              "with rank " +
              std::to_string(p) + ", but rank " + std::to_string(other) + " represents its class";
  }
}

// A collective's group lies inside one class (a generator's flat ring may span).
void ClassDecider::CheckGroups() {
  const RankClassMap& m = d_.map;
  for (size_t g = 0; g < in_.groups->size(); ++g) {
    if (!group_used_[g] || MaySpan(static_cast<int>(g))) continue;
    const std::vector<int>& ranks = (*in_.groups)[g];
    for (int r : ranks) {
      if (m.class_of[r] != m.class_of[ranks[0]]) {
        d_.note = "communicator group " + std::to_string(g) + " spans rank classes " +
                  std::to_string(m.class_of[ranks[0]]) + " (rank " + std::to_string(ranks[0]) + ") and " +
                  std::to_string(m.class_of[r]) + " (rank " + std::to_string(r) + ")";
        return;
      }
    }
  }
}

// Counting is enough: only members run a collective on a group
// (ClassesFromTraces stops at any other), and a member runs one collective at
// each position.
void ClassDecider::CheckGroupPositions() {
  uint64_t first = UINT64_MAX;  // the earliest position and group that fails (the note names one, always the same)
  for (const auto& [key, ranks] : group_uses_) {
    if (ranks != (*in_.groups)[static_cast<uint32_t>(key)].size()) first = std::min(first, key);
  }
  if (first == UINT64_MAX) return;
  const uint32_t group = static_cast<uint32_t>(first);
  d_.note = std::to_string(group_uses_[first]) + " of communicator group " + std::to_string(group) + "'s " +
            std::to_string((*in_.groups)[group].size()) + " ranks run their collective #" +
            std::to_string((first >> 32) + 1) + " on it (the others run that collective on another group of its shape)";
}

// A generator's members use the group of their representative's kind: it
// exists for every member and lies inside the member's class.
void ClassDecider::CheckGeneratorGroups() {
  const RankClassMap& m = d_.map;
  if (!declared_) return;
  std::vector<std::vector<int>> groups_of(npus_);
  for (size_t g = 0; g < in_.groups->size(); ++g) {
    for (int r : (*in_.groups)[g]) groups_of[r].push_back(static_cast<int>(g));
  }
  // Each group's members are checked once (the members of a group share its
  // answer), so this is O(NPUs + groups x members), not NPUs x group size.
  std::vector<uint8_t> checked(in_.groups->size(), 0);
  for (int r = 0; r < npus_; ++r) {
    const int c = m.class_of[r];
    for (int key : kinds_used_[c]) {
      bool found = false;
      for (int g : groups_of[r]) {
        if (kind_of_group_[g] != key) continue;
        found = true;
        if (checked[g] || MaySpan(g)) continue;
        checked[g] = 1;
        for (int x : (*in_.groups)[g]) {
          if (m.class_of[x] != c) {
            d_.note = "rank " + std::to_string(r) + "'s communicator group " + std::to_string(g) +
                      " spans rank classes " + std::to_string(c) + " and " + std::to_string(m.class_of[x]) + " (rank " +
                      std::to_string(x) + ")";
            return;
          }
        }
      }
      if (!found) {
        d_.note = "rank " + std::to_string(r) + " has no communicator group shaped like its representative's (rank " +
                  std::to_string(m.rep[c]) + ")";
        return;
      }
    }
  }
}

// A generator's point-to-point message to another class's member that
// is not simulated goes to that class's representative (RankClassMap::
// Simulated), as if from the sender's representative. Exact when each
// representative receives a tag from one member of a class only (so the
// representative's messages stand for that member's, node for node: same
// class graph, same instant, same distance) and as many as the sending
// class's representative sends into its class with that tag.
void ClassDecider::CheckCrossClassMessages() {
  const RankClassMap& m = d_.map;
  if (!declared_) return;
  std::map<std::tuple<int, int, uint64_t>, int> sender;     // (rep, sending class, tag): the one member
  std::map<std::tuple<int, int, uint64_t>, int64_t> count;  // receives minus the sending rep's sends
  for (const NpuGraph& g : d_.rep_graphs) {
    const int c = m.class_of[g.rank];
    for (const WorkNode& n : g.nodes) {
      if (n.kind == NodeKind::kRecv && m.class_of[n.comm_src] != c) {
        const auto key = std::make_tuple(g.rank, static_cast<int>(m.class_of[n.comm_src]), n.comm_tag);
        const auto [it, added] = sender.emplace(key, n.comm_src);
        if (!added && it->second != n.comm_src) {
          d_.note = "rank " + std::to_string(g.rank) + " receives tag " + std::to_string(n.comm_tag) + " from ranks " +
                    std::to_string(it->second) + " and " + std::to_string(n.comm_src) + " of one class";
          return;
        }
        count[key] += 1;
      } else if (n.kind == NodeKind::kSend && m.class_of[n.comm_dst] != c) {
        count[std::make_tuple(m.rep[m.class_of[n.comm_dst]], c, n.comm_tag)] -= 1;
      }
    }
  }
  for (const auto& [key, left] : count) {
    if (left == 0) continue;
    d_.note = "rank " + std::to_string(std::get<0>(key)) + " receives tag " + std::to_string(std::get<2>(key)) +
              " from class " + std::to_string(std::get<1>(key)) +
              " a different number of times than that class's "
              "representative sends it into its class";
    return;
  }
}

// A collective on all NPUs (or whole dimensions of each rank): neighbours
// along every dimension it spans are in one class.
void ClassDecider::CheckAllNpuCollectives() {
  const RankClassMap& m = d_.map;
  for (uint32_t mask : slab_masks_) {
    for (int k = 0; k < t_.num_dims(); ++k) {
      if (!(mask & (1u << k)) || t_.dims()[k].npus < 2) continue;
      for (int r = 0; r < npus_; ++r) {
        const int next = t_.WithCoord(r, k, (t_.Coord(r, k) + 1) % t_.dims()[k].npus);
        if (m.class_of[r] != m.class_of[next]) {
          d_.note = "a collective on all NPUs spans rank classes " + std::to_string(m.class_of[r]) + " (rank " +
                    std::to_string(r) + ") and " + std::to_string(m.class_of[next]) + " (rank " + std::to_string(next) +
                    ")";
          return;
        }
      }
    }
  }
}

// A point-to-point message inside a class is mirrored: a member sends the
// representative the same message (same node, so same tag and instant, and
// the same distance) when it sends its own; the engine injects that one.
void ClassDecider::FindMirrorSenders() {
  RankClassMap& m = d_.map;
  if (declared_) {
    // The member whose peer at that node is the representative, among the
    // representative's own peers of its class.
    std::vector<int> mine, theirs;
    std::vector<std::pair<int, std::vector<int>>> cands;
    std::map<uint64_t, int32_t> senders;  // (representative << 32 | member): the member that sends it
    for (int rep : m.rep) {
      const int c = m.class_of[rep];
      in_.source->RankPeers(rep, &mine);
      cands.clear();
      for (size_t i = 0; i < mine.size(); ++i) {
        const int p = mine[i];
        if (m.class_of[p] != c) continue;
        int from = -1;
        for (uint32_t k = peer_begin_[rep]; k < peer_begin_[rep + 1] && from < 0; ++k) {
          const int x = peer_of_[k];
          if (m.class_of[x] != c) continue;
          auto it = std::find_if(cands.begin(), cands.end(), [&](const auto& e) { return e.first == x; });
          if (it == cands.end()) {
            in_.source->RankPeers(x, &theirs);
            cands.emplace_back(x, theirs);
            it = cands.end() - 1;
          }
          if (i < it->second.size() && it->second[i] == rep) from = x;
        }
        const uint64_t key = static_cast<uint64_t>(rep) << 32 | static_cast<uint32_t>(p);
        const auto [known, added] = senders.emplace(key, from);
        if (from < 0 || (!added && known->second != from)) {
          d_.note = "rank " + std::to_string(rep) + " exchanges messages with rank " + std::to_string(p) +
                    " of its class, but no single member of the class sends it the matching message";
          return;
        }
      }
    }
    m.mirror_from.assign(senders.begin(), senders.end());  // sorted by key, as MirrorFrom looks up
  } else {
    // Trace files: classes are translations, so the member at the opposite
    // offset does the same; it must be a member.
    for (int r = 0; r < npus_; ++r) {
      for (uint32_t k = peer_begin_[r]; k < peer_begin_[r + 1]; ++k) {
        if (m.class_of[peer_of_[k]] != m.class_of[r]) continue;
        const int sender = Shift(t_, r, Offset(t_, r, peer_of_[k]), -1);
        if (m.class_of[sender] != m.class_of[r]) {
          d_.note = "rank " + std::to_string(r) + " exchanges messages with rank " + std::to_string(peer_of_[k]) +
                    " of its class, but rank " + std::to_string(sender) + " at the opposite offset is in another class";
          return;
        }
      }
    }
  }
}

}  // namespace orrery
