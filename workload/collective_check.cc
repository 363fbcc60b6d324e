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

}  // namespace

Status CheckCollectiveAgreement(const std::vector<NpuGraph>& graphs, const std::vector<GroupInfo>& groups) {
  if (graphs.size() < 2) return Status::Ok();
  std::vector<const NpuGraph*> by_rank;
  for (const auto& g : graphs) {
    if (g.rank < 0) continue;
    if (static_cast<size_t>(g.rank) >= by_rank.size()) by_rank.resize(g.rank + 1, nullptr);
    by_rank[g.rank] = &g;
  }
  // The reference sequence of each group (index 0: all NPUs, g + 1: group g),
  // from its lowest member that was loaded.
  const size_t slots = groups.size() + 1;
  std::vector<int> ref_rank(slots, -1);
  for (size_t s = 0; s < slots; ++s) {
    if (s == 0) {
      for (size_t r = 0; r < by_rank.size() && ref_rank[0] < 0; ++r) {
        if (by_rank[r]) ref_rank[0] = static_cast<int>(r);
      }
      continue;
    }
    for (int r : groups[s - 1].ranks) {
      if (r >= 0 && static_cast<size_t>(r) < by_rank.size() && by_rank[r]) {
        ref_rank[s] = r;
        break;
      }
    }
  }
  std::vector<std::vector<const WorkNode*>> ref(slots);
  for (size_t s = 0; s < slots; ++s) {
    if (ref_rank[s] < 0) continue;
    for (const WorkNode& n : by_rank[ref_rank[s]]->nodes) {
      if (n.kind == NodeKind::kColl && static_cast<size_t>(n.group + 1) == s) ref[s].push_back(&n);
    }
  }
  std::vector<size_t> count(slots, 0);
  std::vector<size_t> touched;
  for (const NpuGraph& g : graphs) {
    for (size_t s : touched) count[s] = 0;
    touched.clear();
    for (const WorkNode& n : g.nodes) {
      if (n.kind != NodeKind::kColl) continue;
      const size_t s = static_cast<size_t>(n.group + 1);
      if (s >= slots) continue;
      if (s > 0 && !std::binary_search(groups[s - 1].ranks.begin(), groups[s - 1].ranks.end(), g.rank)) {
        continue;  // a non-member's collective is reported where the group is resolved
      }
      const size_t k = count[s]++;
      if (count[s] == 1) touched.push_back(s);
      if (g.rank == ref_rank[s]) continue;
      if (k >= ref[s].size()) {
        // The reference rank has fewer: maybe it issued this one in another group.
        const NpuGraph& rg = *by_rank[ref_rank[s]];
        auto it = std::lower_bound(rg.nodes.begin(), rg.nodes.end(), n.id,
                                   [](const WorkNode& w, uint64_t id) { return w.id < id; });
        if (it != rg.nodes.end() && it->id == n.id && it->kind == NodeKind::kColl && it->group != n.group) {
          return Status::Invalid("collective mismatch: rank " + std::to_string(ref_rank[s]) + " node " +
                                 std::to_string(it->id) + " is " + Describe(*it) + " " + GroupText(groups, it->group) +
                                 " but rank " + std::to_string(g.rank) + " node " + std::to_string(n.id) + " is " +
                                 Describe(n) + " " + GroupText(groups, n.group));
        }
        continue;  // only a count differs: the run reports the deadlock with what each rank waits for
      }
      const WorkNode& want = *ref[s][k];
      if (want.collective != n.collective || want.comm_size != n.comm_size) {
        return Status::Invalid("collective mismatch: rank " + std::to_string(ref_rank[s]) + " node " +
                               std::to_string(want.id) + " is " + Describe(want) + " but rank " +
                               std::to_string(g.rank) +
                               " node " + std::to_string(n.id) + " (its " + Ordinal(k + 1) + " collective " +
                               GroupText(groups, n.group) + ") is " + Describe(n));
      }
    }
  }
  return Status::Ok();
}

Status CheckCollectiveAgreement(const std::vector<NpuGraph>& graphs, const CollectiveEngine& engine) {
  std::vector<GroupInfo> groups(engine.num_groups());
  for (int g = 0; g < engine.num_groups(); ++g) groups[g] = GroupInfo{engine.group(g).name, engine.group(g).ranks};
  return CheckCollectiveAgreement(graphs, groups);
}

}  // namespace orrery
