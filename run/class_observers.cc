#include "run/class_observers.h"

#include <algorithm>

#include "report/timeline.h"

namespace orrery {

namespace {

// The first field in which two nodes at the same index differ, or nullptr.
const char* NodeMismatch(const NpuGraph& a, const WorkNode& x, const NpuGraph& b, const WorkNode& y) {
  if (x.kind != y.kind) return "kind";
  if (x.is_cpu != y.is_cpu || x.has_num_ops != y.has_num_ops || x.duration_micros != y.duration_micros ||
      x.num_ops != y.num_ops || x.tensor_size != y.tensor_size || x.output_bytes != y.output_bytes ||
      x.compute_efficiency != y.compute_efficiency || x.memory_efficiency != y.memory_efficiency) {
    return "compute or memory attributes";
  }
  if (x.local_tier != y.local_tier) return "memory tier";
  if (x.collective != y.collective || x.comm_size != y.comm_size || x.comm_tag != y.comm_tag ||
      x.comm_stream != y.comm_stream || (x.group < 0) != (y.group < 0)) {
    return "communication attributes";
  }
  if (x.num_deps != y.num_deps || x.child_end - x.child_begin != y.child_end - y.child_begin) return "dependencies";
  for (uint32_t i = 0; i < x.child_end - x.child_begin; ++i) {
    if (a.children[x.child_begin + i] != b.children[y.child_begin + i]) return "dependencies";
  }
  const bool xi = x.involved >= 0, yi = y.involved >= 0;
  if (xi != yi || (xi && a.involved[x.involved] != b.involved[y.involved])) return "involved dimensions";
  return nullptr;
}

// The timeline's selected ranks that are not representatives: their own graphs, matched to their representatives'.
Result<std::string> LoadShown(const Spec& spec, const ClassDecision& d,
                              const std::function<Result<NpuGraph>(int)>& load, std::vector<NpuGraph>* shown) {
  auto selected = ParseRankSelection(spec.observe.timeline_ranks, spec.npus);
  if (!selected.ok()) return selected.status();
  const RankClassMap& m = d.map;
  size_t count = 0;
  for (int r = 0; r < spec.npus; ++r) count += selected.value()[r] && m.RepOf(r) != r;
  // Every shown rank's graph is held at once: beyond half the ranks, the full engine costs no more memory.
  if (count > static_cast<size_t>(spec.npus) / 2) {
    return "--timeline draws " + std::to_string(count) + " ranks that are not representatives (more than half of " +
           std::to_string(spec.npus) + "; --timeline-ranks=LIST draws fewer)";
  }
  for (int r = 0; r < spec.npus; ++r) {
    if (!selected.value()[r] || m.RepOf(r) == r) continue;
    auto g = load(r);
    if (!g.ok()) return g.status();
    const int rep = m.RepOf(r);
    auto it = std::lower_bound(d.rep_graphs.begin(), d.rep_graphs.end(), rep,
                               [](const NpuGraph& x, int rank) { return x.rank < rank; });
    const std::string diff = AlignmentDifference(*it, g.value());
    if (!diff.empty()) {
      return "--timeline: rank " + std::to_string(r) + "'s graph does not match its representative " +
             std::to_string(rep) + "'s node by node (" + diff + ")";
    }
    shown->push_back(std::move(g.value()));
  }
  return std::string();
}

// The communicator groups as the engine numbers them (by name).
std::vector<std::vector<int>> GroupsOf(const Spec& spec) {
  std::vector<std::vector<int>> out;
  for (const auto& [name, ranks] : spec.comm_groups) out.push_back(ranks);
  return out;
}

}  // namespace

std::string AlignmentDifference(const NpuGraph& rep, const NpuGraph& member) {
  if (rep.nodes.size() != member.nodes.size()) {
    return std::to_string(member.nodes.size()) + " nodes, the representative has " + std::to_string(rep.nodes.size());
  }
  for (size_t i = 0; i < rep.nodes.size(); ++i) {
    if (const char* field = NodeMismatch(rep, rep.nodes[i], member, member.nodes[i])) {
      return "node " + std::to_string(member.nodes[i].id) + ": " + field;
    }
  }
  return "";
}

Result<std::string> PrepareClassObservers(const Spec& spec, const ClassDecision& d,
                                          const std::function<Result<NpuGraph>(int)>& load,
                                          std::vector<NpuGraph>* shown) {
  if (!d.use) return std::string();
  if (spec.observe.critical_path) {
    // The path crosses to the member of a collective that joined it last; inside
    // one class every member joins at the same instant, so no crossing is needed.
    // The representatives' groups lie inside their classes or are flat rings
    // spanning classes (the decision checked every member's group against them).
    const RankClassMap& m = d.map;
    const std::vector<std::vector<int>> groups = GroupsOf(spec);
    std::vector<uint8_t> seen(groups.size(), 0);
    for (const NpuGraph& g : d.rep_graphs) {
      for (const WorkNode& n : g.nodes) {
        if (n.kind != NodeKind::kColl || n.group < 0 || n.group >= static_cast<int>(groups.size()) || seen[n.group]) {
          continue;
        }
        seen[n.group] = 1;
        for (int r : groups[n.group]) {
          if (r >= 0 && r < spec.npus && !m.SameClass(r, g.rank)) {
            return "--critical-path: rank " + std::to_string(g.rank) + "'s collective " + std::to_string(n.id) +
                   " runs on a communicator group that spans rank classes (ranks " + std::to_string(g.rank) + " and " +
                   std::to_string(r) + ")";
          }
        }
      }
    }
  }
  if (spec.observe.timeline_path.empty()) return std::string();
  return LoadShown(spec, d, load, shown);
}

}  // namespace orrery
