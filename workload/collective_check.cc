#include "workload/collective_check.h"

#include <algorithm>
#include <cstdint>

#include "extern/et_io.h"

namespace orrery {
namespace {

std::string Ordinal(size_t k) {  // 1-based
  const char* suffix = "th";
  if (k % 100 < 11 || k % 100 > 13) {
    if (k % 10 == 1) suffix = "st";
    if (k % 10 == 2) suffix = "nd";
    if (k % 10 == 3) suffix = "rd";
  }
  return std::to_string(k) + suffix;
}

std::string Describe(const WorkNode& n) {
  return std::string(CollectiveName(n.collective)) + " of " + std::to_string(n.comm_size) + " bytes";
}

std::string GroupText(const std::vector<GroupInfo>& groups, int g) {
  return g < 0 ? std::string("on all NPUs") : "in group \"" + groups[g].name + "\"";
}

// The check over one set of graphs. A slot is a group's sequence: 0 for all
// NPUs, g + 1 for group g.
class AgreementCheck {
 public:
  AgreementCheck(const std::vector<NpuGraph>& graphs, const std::vector<GroupInfo>& groups);
  Status CheckRank(const NpuGraph& g);

 private:
  int LowestLoaded(size_t slot) const;
  Status Unpaired(const NpuGraph& g, const WorkNode& n, size_t slot) const;
  Status Compare(const NpuGraph& g, const WorkNode& n, size_t slot, size_t k) const;

  const std::vector<GroupInfo>& groups_;
  std::vector<const NpuGraph*> by_rank_;
  std::vector<int> ref_rank_;                      // per slot: the rank whose sequence is the reference
  std::vector<std::vector<const WorkNode*>> ref_;  // per slot: the reference rank's collectives in it
  std::vector<size_t> count_;                      // per slot: the checked rank's collectives so far
  std::vector<size_t> touched_;                    // the slots whose count_ is not 0
};

AgreementCheck::AgreementCheck(const std::vector<NpuGraph>& graphs, const std::vector<GroupInfo>& groups)
    : groups_(groups), ref_rank_(groups.size() + 1, -1), ref_(groups.size() + 1), count_(groups.size() + 1, 0) {
  for (const auto& g : graphs) {
    if (g.rank < 0) continue;
    if (static_cast<size_t>(g.rank) >= by_rank_.size()) by_rank_.resize(g.rank + 1, nullptr);
    by_rank_[g.rank] = &g;
  }
  for (size_t s = 0; s < ref_.size(); ++s) {
    ref_rank_[s] = LowestLoaded(s);
    if (ref_rank_[s] < 0) continue;
    for (const WorkNode& n : by_rank_[ref_rank_[s]]->nodes) {
      if (n.kind == NodeKind::kColl && static_cast<size_t>(n.group + 1) == s) ref_[s].push_back(&n);
    }
  }
}

// The slot's lowest member that was loaded (-1: none).
int AgreementCheck::LowestLoaded(size_t slot) const {
  if (slot == 0) {
    for (size_t r = 0; r < by_rank_.size(); ++r) {
      if (by_rank_[r]) return static_cast<int>(r);
    }
    return -1;
  }
  for (int r : groups_[slot - 1].ranks) {
    if (r >= 0 && static_cast<size_t>(r) < by_rank_.size() && by_rank_[r]) return r;
  }
  return -1;
}

Status AgreementCheck::CheckRank(const NpuGraph& g) {
  for (size_t s : touched_) count_[s] = 0;
  touched_.clear();
  for (const WorkNode& n : g.nodes) {
    if (n.kind != NodeKind::kColl) continue;
    const size_t s = static_cast<size_t>(n.group + 1);
    if (s >= ref_.size()) continue;
    if (s > 0 && !std::binary_search(groups_[s - 1].ranks.begin(), groups_[s - 1].ranks.end(), g.rank)) {
      continue;  // a non-member's collective is reported where the group is resolved
    }
    const size_t k = count_[s]++;
    if (count_[s] == 1) touched_.push_back(s);
    if (g.rank == ref_rank_[s]) continue;
    ORRERY_RETURN_IF_ERROR(k >= ref_[s].size() ? Unpaired(g, n, s) : Compare(g, n, s, k));
  }
  return Status::Ok();
}

// The reference rank has fewer collectives in the slot: maybe it issued this
// one in another group; if only a count differs, the run reports the deadlock
// with what each rank waits for.
Status AgreementCheck::Unpaired(const NpuGraph& g, const WorkNode& n, size_t slot) const {
  const NpuGraph& rg = *by_rank_[ref_rank_[slot]];
  auto it = std::lower_bound(rg.nodes.begin(), rg.nodes.end(), n.id,
                             [](const WorkNode& w, uint64_t id) { return w.id < id; });
  if (it == rg.nodes.end() || it->id != n.id || it->kind != NodeKind::kColl || it->group == n.group) {
    return Status::Ok();
  }
  return Status::Invalid("collective mismatch: rank " + std::to_string(ref_rank_[slot]) + " node " +
                         std::to_string(it->id) + " is " + Describe(*it) + " " + GroupText(groups_, it->group) +
                         " but rank " + std::to_string(g.rank) + " node " + std::to_string(n.id) + " is " +
                         Describe(n) + " " + GroupText(groups_, n.group));
}

// `n`, the rank's k-th collective in the slot, against the reference's k-th.
Status AgreementCheck::Compare(const NpuGraph& g, const WorkNode& n, size_t slot, size_t k) const {
  const WorkNode& want = *ref_[slot][k];
  if (want.collective == n.collective && want.comm_size == n.comm_size) return Status::Ok();
  return Status::Invalid("collective mismatch: rank " + std::to_string(ref_rank_[slot]) + " node " +
                         std::to_string(want.id) + " is " + Describe(want) + " but rank " + std::to_string(g.rank) +
                         " node " + std::to_string(n.id) + " (its " + Ordinal(k + 1) + " collective " +
                         GroupText(groups_, n.group) + ") is " + Describe(n));
}

}  // namespace

Status CheckCollectiveAgreement(const std::vector<NpuGraph>& graphs, const std::vector<GroupInfo>& groups) {
  if (graphs.size() < 2) return Status::Ok();
  AgreementCheck check(graphs, groups);
  for (const NpuGraph& g : graphs) ORRERY_RETURN_IF_ERROR(check.CheckRank(g));
  return Status::Ok();
}

Status CheckCollectiveAgreement(const std::vector<NpuGraph>& graphs, const CollectiveEngine& engine) {
  std::vector<GroupInfo> groups(engine.num_groups());
  for (int g = 0; g < engine.num_groups(); ++g) groups[g] = GroupInfo{engine.group(g).name, engine.group(g).ranks};
  return CheckCollectiveAgreement(graphs, groups);
}

}  // namespace orrery
