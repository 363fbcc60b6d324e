#include "workload/graph_links.h"

#include <algorithm>
#include <limits>

namespace orrery {

bool ProblemSink::Take(Status st) {
  if (!list_) {
    first_ = std::move(st);
    return false;
  }
  list_->Add(st.message());
  return true;
}

Status AppendDependencies(const ChakraProtoMsg::Node& n, const std::string& where, DependencyLists* deps) {
  std::vector<uint64_t>& ids = deps->ids;
  const size_t first = ids.size();
  ids.insert(ids.end(), n.data_deps().begin(), n.data_deps().end());
  std::sort(ids.begin() + first, ids.end());
  ids.erase(std::unique(ids.begin() + first, ids.end()), ids.end());
  const size_t ctrl = ids.size();
  for (const uint64_t c : n.ctrl_deps()) {
    if (!std::binary_search(ids.begin() + first, ids.begin() + ctrl, c)) ids.push_back(c);
  }
  std::sort(ids.begin() + ctrl, ids.end());
  ids.erase(std::unique(ids.begin() + ctrl, ids.end()), ids.end());
  if (ids.size() >= UINT32_MAX) {
    return Status::Invalid(where + ": the trace names more than " + std::to_string(UINT32_MAX - 1) +
                           " dependencies in all; allowed: fewer");
  }
  deps->ctrl.push_back(static_cast<uint32_t>(ctrl));
  deps->begin.push_back(static_cast<uint32_t>(ids.size()));
  return Status::Ok();
}

namespace {

std::string NodeWhere(const NpuGraph& g, uint64_t id) {
  return g.path + ": node " + std::to_string(id) + " (rank " + std::to_string(g.rank) + ")";
}

// Sorts the nodes by id (issue order; a trace is usually written in id order
// already). Returns each sorted position's read position.
std::vector<uint32_t> SortById(NpuGraph* g) {
  const size_t count = g->nodes.size();
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  auto by_id = [](const WorkNode& a, const WorkNode& b) { return a.id < b.id; };
  if (!std::is_sorted(g->nodes.begin(), g->nodes.end(), by_id)) {
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return by_id(g->nodes[a], g->nodes[b]); });
    std::vector<WorkNode> sorted;
    sorted.reserve(count);
    for (uint32_t i : order) sorted.push_back(std::move(g->nodes[i]));
    g->nodes = std::move(sorted);
  }
  return order;
}

// Sorted, a repeated id is next to its twin; the smallest one first.
bool CheckUniqueIds(const NpuGraph& g, ProblemSink* sink) {
  const uint64_t before = sink->listed();
  for (size_t i = 1; i < g.nodes.size(); ++i) {
    if (g.nodes[i].id == g.nodes[i - 1].id && (i < 2 || g.nodes[i - 2].id != g.nodes[i].id)) {
      if (!sink->Take(Status::Invalid(g.path + ": node id " + std::to_string(g.nodes[i].id) + " appears twice (rank " +
                                      std::to_string(g.rank) + ")"))) {
        return false;
      }
    }
  }
  return sink->listed() == before;  // repeated ids leave the edges ambiguous: stop after listing them
}

// Each kept (node, dependency) pair in sorted node order.
struct Edges {
  std::vector<uint32_t> parent;
  std::vector<bool> ctrl;
};

// A dangling or self edge: dropped when it is a control edge under
// --ctrl-deps=repair (counted), else a problem naming its kind.
bool BadEdge(NpuGraph* g, uint32_t i, uint64_t dep, bool ctrl, bool self, const GraphLoadOptions& options,
             ProblemSink* sink) {
  if (ctrl && options.repair_ctrl_deps) {
    ++(self ? g->notes.ctrl_self : g->notes.ctrl_dangling);
    return true;
  }
  std::string what = NodeWhere(*g, g->nodes[i].id) +
                     (self ? " depends on itself"
                           : " depends on node " + std::to_string(dep) + ", which is not in the trace");
  what += ctrl ? " (a ctrl_deps edge; --ctrl-deps=repair drops control edges that " +
                     std::string(self ? "point at their own node)" : "point at no node)")
               : " (a data_deps edge)";
  return sink->Take(Status::Invalid(what));
}

// Resolves every dependency by binary search over the sorted ids and counts
// each node's dependencies.
bool ResolveParents(NpuGraph* g, const std::vector<uint32_t>& order, const DependencyLists& deps,
                    const GraphLoadOptions& options, Edges* edges, ProblemSink* sink) {
  edges->parent.reserve(deps.ids.size());
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    const uint32_t k = order[i];
    for (uint32_t e = deps.begin[k]; e < deps.begin[k + 1]; ++e) {
      const uint64_t dep = deps.ids[e];
      const bool ctrl = e >= deps.ctrl[k];
      auto it = std::lower_bound(g->nodes.begin(), g->nodes.end(), dep,
                                 [](const WorkNode& a, uint64_t id) { return a.id < id; });
      const bool missing = it == g->nodes.end() || it->id != dep;
      if (missing || dep == g->nodes[i].id) {
        if (!BadEdge(g, i, dep, ctrl, !missing, options, sink)) return false;
        continue;
      }
      edges->parent.push_back(static_cast<uint32_t>(it - g->nodes.begin()));
      edges->ctrl.push_back(ctrl);
      g->nodes[i].num_deps++;
    }
  }
  return true;
}

// Children in compressed rows: a parent's children in increasing index.
void LinkChildren(NpuGraph* g, const std::vector<uint32_t>& parent_of) {
  const size_t count = g->nodes.size();
  std::vector<uint32_t> kid_count(count + 1, 0);
  for (uint32_t p : parent_of) ++kid_count[p + 1];
  for (size_t i = 0; i < count; ++i) kid_count[i + 1] += kid_count[i];
  g->children.assign(parent_of.size(), 0);
  for (size_t i = 0; i < count; ++i) g->nodes[i].child_begin = g->nodes[i].child_end = kid_count[i];
  size_t pair = 0;
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t d = 0; d < g->nodes[i].num_deps; ++d) g->children[g->nodes[parent_of[pair++]].child_end++] = i;
  }
}

// Nodes Kahn's algorithm reaches (all of them when there is no cycle).
size_t Reachable(const NpuGraph& g) {
  std::vector<uint32_t> pending(g.nodes.size());
  std::vector<uint32_t> stack;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    pending[i] = g.nodes[i].num_deps;
    if (pending[i] == 0) stack.push_back(i);
  }
  size_t seen = 0;
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    ++seen;
    for (uint32_t c = g.nodes[i].child_begin; c < g.nodes[i].child_end; ++c) {
      if (--pending[g.children[c]] == 0) stack.push_back(g.children[c]);
    }
  }
  return seen;
}

// --ctrl-deps=repair: drops the control edges inside a component (on a cycle) and links again.
void DropCyclicControlEdges(NpuGraph* g, const std::vector<uint32_t>& comp, Edges* edges) {
  size_t pair = 0, kept = 0;
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    const uint32_t deps = g->nodes[i].num_deps;
    for (uint32_t d = 0; d < deps; ++d, ++pair) {
      if (edges->ctrl[pair] && comp[edges->parent[pair]] == comp[i]) {
        --g->nodes[i].num_deps;
        ++g->notes.ctrl_cyclic;
        continue;
      }
      edges->parent[kept] = edges->parent[pair];
      edges->ctrl[kept++] = edges->ctrl[pair];
    }
  }
  edges->parent.resize(kept);
  edges->ctrl.resize(kept);
  LinkChildren(g, edges->parent);
}

// A cycle, named by its lowest node and the kinds of its edges.
Status CycleError(const NpuGraph& g, const Edges& edges, const std::vector<uint32_t>& comp, size_t stuck) {
  std::vector<uint32_t> size(g.nodes.size(), 0);
  for (uint32_t c : comp) ++size[c];
  uint32_t first = 0;
  while (size[comp[first]] < 2) ++first;  // some component holds a cycle
  bool ctrl_inside = false;
  size_t pair = 0;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    for (uint32_t d = 0; d < g.nodes[i].num_deps; ++d, ++pair) {
      ctrl_inside |= edges.ctrl[pair] && comp[i] == comp[first] && comp[edges.parent[pair]] == comp[first];
    }
  }
  return Status::Invalid(
      g.path + ": dependency cycle through node " + std::to_string(g.nodes[first].id) + " (rank " +
      std::to_string(g.rank) + "); " + std::to_string(stuck) + " node(s) can never run; " +
      (ctrl_inside ? "the cycle has ctrl_deps edges (operator-tree parents, as early Chakra converters wrote them): "
                     "--ctrl-deps=repair drops control edges that lie on cycles"
                   : "its edges are all data_deps"));
}

}  // namespace

bool LinkGraph(NpuGraph* g, const DependencyLists& deps, const GraphLoadOptions& options, ProblemSink* sink) {
  const std::vector<uint32_t> order = SortById(g);
  if (!CheckUniqueIds(*g, sink)) return false;
  Edges edges;
  const uint64_t before = sink->listed();
  if (!ResolveParents(g, order, deps, options, &edges, sink)) return false;
  LinkChildren(g, edges.parent);
  if (sink->listed() != before) return true;  // listed: the cycle check would only see a partial graph
  if (Reachable(*g) == g->nodes.size()) return true;
  std::vector<uint32_t> comp = StronglyConnected(*g);
  if (options.repair_ctrl_deps) {
    DropCyclicControlEdges(g, comp, &edges);
    if (Reachable(*g) == g->nodes.size()) return true;
    comp = StronglyConnected(*g);
  }
  return sink->Take(CycleError(*g, edges, comp, g->nodes.size() - Reachable(*g)));
}

namespace {

constexpr uint32_t kUnvisited = std::numeric_limits<uint32_t>::max();

struct Tarjan {
  const NpuGraph& g;
  std::vector<uint32_t> index, low, comp;
  std::vector<uint8_t> on_stack;
  std::vector<uint32_t> stack;
  std::vector<std::pair<uint32_t, uint32_t>> calls;  // (node, next child position)
  uint32_t next_index = 0, next_comp = 0;

  explicit Tarjan(const NpuGraph& graph)
      : g(graph),
        index(graph.nodes.size(), kUnvisited),
        low(graph.nodes.size(), 0),
        comp(graph.nodes.size(), kUnvisited),
        on_stack(graph.nodes.size(), 0) {}

  void Enter(uint32_t v) {
    index[v] = low[v] = next_index++;
    stack.push_back(v);
    on_stack[v] = 1;
    calls.emplace_back(v, g.nodes[v].child_begin);
  }

  // A node whose children are all seen: the root of a component pops it.
  void Leave(uint32_t v) {
    if (low[v] == index[v]) {
      uint32_t w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = 0;
        comp[w] = next_comp;
      } while (w != v);
      ++next_comp;
    }
    calls.pop_back();
    if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[v]);
  }

  void From(uint32_t root) {
    Enter(root);
    while (!calls.empty()) {
      auto& [v, pos] = calls.back();
      if (pos == g.nodes[v].child_end) {
        Leave(v);
        continue;
      }
      const uint32_t w = g.children[pos++];
      if (index[w] == kUnvisited) {
        Enter(w);  // invalidates v and pos: the loop reads them again
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
  }
};

}  // namespace

std::vector<uint32_t> StronglyConnected(const NpuGraph& g) {
  Tarjan t(g);
  for (uint32_t v = 0; v < g.nodes.size(); ++v) {
    if (t.index[v] == kUnvisited) t.From(v);
  }
  return std::move(t.comp);
}

}  // namespace orrery
