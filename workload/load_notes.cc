#include "workload/load_notes.h"

#include <cstdint>

namespace orrery {

namespace {

// Over the simulated ranks (stand-ins of rank classes have rank -1).
template <typename F>
void ForSimulated(const Executor& exec, F f) {
  for (const Executor::NpuState& s : exec.npus()) {
    if (s.graph.rank >= 0) f(s.graph);
  }
}

// With the roofline on, when some GPU node kept its measured duration.
std::string ComputeNote(const Executor& exec) {
  uint64_t roofline = 0, measured = 0, cpu = 0;
  int ranks = 0;
  ForSimulated(exec, [&](const NpuGraph& g) {
    ++ranks;
    for (const WorkNode& n : g.nodes) {
      if (n.kind != NodeKind::kComp) continue;
      if (n.is_cpu) {
        ++cpu;
      } else if (!n.has_num_ops && n.duration_micros > 0) {
        ++measured;
      } else {
        ++roofline;
      }
    }
  });
  if (measured == 0) return "";
  return "compute nodes with the roofline on, over " + std::to_string(ranks) +
         " simulated rank(s): " + std::to_string(roofline) + " GPU node(s) timed by the roofline (num_ops), " +
         std::to_string(measured) + " by their measured duration_micros (no num_ops), " + std::to_string(cpu) +
         " CPU node(s) replayed";
}

std::string RootNote(const Executor& exec, const CollectiveEngine& engine) {
  uint64_t count = 0;
  std::string example;
  ForSimulated(exec, [&](const NpuGraph& g) {
    if (g.notes.rootless == 0) return;
    count += g.notes.rootless;
    if (!example.empty()) return;
    for (const WorkNode& n : g.nodes) {
      if (n.id != g.notes.first_rootless || n.kind != NodeKind::kColl) continue;
      const std::string group = n.group >= 0 ? "group \"" + engine.group(n.group).name + "\"" : "all NPUs";
      const int root = n.group >= 0 ? engine.group(n.group).ranks.front() : 0;
      example = "rank " + std::to_string(g.rank) + " node " + std::to_string(n.id) + ": " +
                CollectiveName(n.collective) + " over " + group + ", root " + std::to_string(root);
      break;
    }
  });
  if (count == 0) return "";
  return std::to_string(count) +
         " rooted collective(s) on the simulated ranks give no 'root' (nor 'comm_src'): each is rooted at the first "
         "rank of its group (" +
         example + ")";
}

// Per rank, up to 8 ranks named, then a total.
std::vector<std::string> CtrlNotes(const Executor& exec) {
  std::vector<std::string> out;
  uint64_t ranks = 0, total = 0;
  ForSimulated(exec, [&](const NpuGraph& g) {
    const GraphLoadNotes& n = g.notes;
    const uint64_t dropped = n.ctrl_dangling + n.ctrl_self + n.ctrl_cyclic;
    if (dropped == 0) return;
    total += dropped;
    if (++ranks > 8) return;
    out.push_back("ctrl_deps: rank " + std::to_string(g.rank) + " dropped " + std::to_string(dropped) +
                  " control edge(s): " + std::to_string(n.ctrl_dangling) + " to nodes not in the trace, " +
                  std::to_string(n.ctrl_self) + " to the node itself, " + std::to_string(n.ctrl_cyclic) +
                  " on dependency cycles");
  });
  uint64_t host = 0, host_ranks = 0;
  ForSimulated(exec, [&](const NpuGraph& g) {
    host += g.notes.host_collectives;
    host_ranks += g.notes.host_collectives > 0;
  });
  if (host > 0) {
    out.push_back("host collectives: " + std::to_string(host) +
                  " COMM_COLL node(s) with is_cpu_op and neither "
                  "comm_type nor comm_size ran as CPU ops of their duration, on " +
                  std::to_string(host_ranks) + " simulated rank(s)");
  }
  if (ranks > 8) {
    out.push_back("ctrl_deps: " + std::to_string(ranks) + " simulated ranks dropped " + std::to_string(total) +
                  " control edge(s) in all");
  }
  return out;
}

}  // namespace

std::vector<std::string> GraphNotes(const Executor& exec, const CollectiveEngine& engine, bool roofline) {
  std::vector<std::string> notes;
  if (roofline) {
    if (std::string c = ComputeNote(exec); !c.empty()) notes.push_back(std::move(c));
  }
  if (std::string r = RootNote(exec, engine); !r.empty()) notes.push_back(std::move(r));
  for (std::string& c : CtrlNotes(exec)) notes.push_back(std::move(c));
  return notes;
}

}  // namespace orrery
