#include "workload/graph.h"

#include <algorithm>

#include "core/limits.h"
#include "core/parse.h"
#include "extern/et_io.h"

namespace orrery {

namespace {

std::string NodeWhere(const std::string& path, uint64_t id, int rank) {
  return path + ": node " + std::to_string(id) + " (rank " + std::to_string(rank) + ")";
}

}  // namespace

Result<NpuGraph> LoadNpuGraph(const std::string& path, int rank, const GraphLoadOptions& options) {
  EtReader reader;
  ORRERY_RETURN_IF_ERROR(reader.Open(path));
  NpuGraph g;
  g.rank = rank;
  g.path = path;
  // Every node's dependencies (data and control, sorted, without repeats) in
  // one array: node k's are [dep_begin[k], dep_begin[k + 1]), in read order.
  std::vector<uint64_t> deps;
  std::vector<uint32_t> dep_begin{0};
  ChakraProtoMsg::Node n;
  while (true) {
    Result<bool> more = reader.Next(&n);
    if (!more.ok()) return more.status();
    if (!more.value()) break;
    WorkNode w;
    w.id = n.id();
    w.name = std::move(*n.mutable_name());  // `n` is parsed afresh for the next node
    const int type = static_cast<int>(n.type());
    const std::optional<NodeKind> kind = NodeKindFromChakra(type);
    if (!kind) {
      return Status::Invalid(NodeWhere(path, w.id, rank) + ": node type " + std::to_string(type) +
                             " is not a Chakra NodeType; valid: 0..7 (INVALID_NODE .. COMM_COLL_NODE)");
    }
    w.kind = *kind;
    // The node's location, for messages; built only on an error.
    auto at = [&](const char* key) { return Where{"", 0, NodeWhere(path, w.id, rank) + ": " + key}; };
    if (n.duration_micros() > kMaxDurationMicros) {
      return ValueError(at("duration_micros"), std::to_string(n.duration_micros()), "out of range",
                        DescribeUintRange(0, kMaxDurationMicros));
    }
    w.duration_micros = n.duration_micros();
    // Every integer attribute goes through the checked read: -1 is not 2^64-1, NaN is not 0.
    auto read = [&](const char* key, uint64_t max) -> Result<std::optional<uint64_t>> {
      const auto* a = FindAttr(n, key);
      if (!a) return std::optional<uint64_t>();
      auto v = AttrUintChecked(*a, Where{}, 0, max);
      if (!v.ok()) return AttrUintChecked(*a, at(key), 0, max).status();  // again, to name the node
      return std::optional<uint64_t>(v.value());
    };
    auto need = [&](const char* key, uint64_t max) -> Result<uint64_t> {
      if (!FindAttr(n, key)) {
        return Status::Invalid(NodeWhere(path, w.id, rank) + ": " + NodeTypeName(w.kind) + " needs attribute '" + key + "'");
      }
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> v, read(key, max));
      return *v;
    };
    // Attributes are read (and checked) on the node types that use them; producers
    // attach others freely.
    const bool comp = w.kind == NodeKind::kComp;
    const bool mem = w.kind == NodeKind::kMemLoad || w.kind == NodeKind::kMemStore;
    if (comp) {
      if (const auto* a = FindAttr(n, "is_cpu_op")) {
        const auto b = AttrBool(*a);
        if (!b) return ValueError(at("is_cpu_op"), "(not a switch)", "not a boolean", "true, false, 0 or 1");
        w.is_cpu = *b;
      }
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> num_ops, read("num_ops", kMaxNumOps));
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> output_bytes, read("output_bytes", kMaxBytes));
      w.num_ops = num_ops.value_or(0);
      w.output_bytes = output_bytes.value_or(0);
    }
    if (comp || mem) {
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> tensor_size, read("tensor_size", kMaxBytes));
      w.tensor_size = tensor_size.value_or(0);
    }
    std::optional<uint64_t> comm_type;
    if (w.kind == NodeKind::kColl) {
      ORRERY_PARSE_OR_RETURN(comm_type, read("comm_type", UINT64_MAX));
    }
    if (const auto* a = FindAttr(n, "memory_tier"); a && (w.kind == NodeKind::kMemLoad || w.kind == NodeKind::kMemStore)) {
      const auto tier = AttrString(*a);
      if (!tier || (*tier != "local" && *tier != "remote")) {
        return Status::Invalid(NodeWhere(path, w.id, rank) + ": memory_tier = \"" + tier.value_or("?") +
                               "\": valid values are local, remote");
      }
      w.local_tier = *tier == "local";
    }
    const bool barrier = w.kind == NodeKind::kColl && comm_type &&
                         CollectiveKindFromChakra(*comm_type) == std::optional(CollectiveKind::kBarrier);
    if ((w.kind == NodeKind::kColl && !barrier) || w.kind == NodeKind::kSend || w.kind == NodeKind::kRecv) {
      ORRERY_PARSE_OR_RETURN(w.comm_size, need("comm_size", kMaxBytes));
    }
    if (w.kind == NodeKind::kColl) {
      auto t = need("comm_type", UINT64_MAX);
      if (!t.ok()) return t.status();
      const std::optional<CollectiveKind> collective = CollectiveKindFromChakra(t.value());
      if (!collective) {
        return Status::Invalid(NodeWhere(path, w.id, rank) + ": comm_type " + std::to_string(t.value()) +
                               " is not a Chakra CollectiveCommType; valid: 0 ALL_REDUCE, 1 REDUCE, 2 ALL_GATHER, "
                               "3 GATHER, 4 SCATTER, 5 BROADCAST, 6 ALL_TO_ALL, 7 REDUCE_SCATTER, "
                               "8 REDUCE_SCATTER_BLOCK, 9 BARRIER");
      }
      w.collective = *collective;
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> root_attr, read("root", UINT64_MAX));
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> src_attr, read("comm_src", UINT64_MAX));
      if (auto root = root_attr ? root_attr : src_attr) {
        if (*root >= static_cast<uint64_t>(options.num_npus)) {
          return Status::Invalid(NodeWhere(path, w.id, rank) + ": root rank " + std::to_string(*root) +
                                 " is outside the network's ranks 0.." + std::to_string(options.num_npus - 1));
        }
        w.comm_root = static_cast<int>(*root);
      }
      if (const auto* a = FindAttr(n, "involved_dim")) {
        auto list = AttrBoolList(*a);
        if (!list) return Status::Invalid(NodeWhere(path, w.id, rank) + ": attribute 'involved_dim' must be a bool list");
        if (static_cast<int>(list->size()) > options.num_dims) {
          return Status::Invalid(NodeWhere(path, w.id, rank) + ": involved_dim has " + std::to_string(list->size()) +
                                 " entries but the network has " + std::to_string(options.num_dims) +
                                 " dimension(s); give at most one entry per dimension");
        }
        w.involved = static_cast<int>(g.involved.size());
        g.involved.push_back(*list);
      }
    }
    if (w.kind == NodeKind::kSend || w.kind == NodeKind::kRecv) {
      const bool send = w.kind == NodeKind::kSend;
      auto peer = need(send ? "comm_dst" : "comm_src", UINT64_MAX);
      if (!peer.ok()) return peer.status();
      if (peer.value() >= static_cast<uint64_t>(options.num_npus)) {
        return Status::Invalid(NodeWhere(path, w.id, rank) + ": " + (send ? "comm_dst" : "comm_src") + " = " +
                               std::to_string(peer.value()) + " is outside the network's ranks 0.." +
                               std::to_string(options.num_npus - 1));
      }
      (send ? w.comm_dst : w.comm_src) = static_cast<int>(peer.value());
      ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> tag, read("comm_tag", UINT64_MAX));
      w.comm_tag = tag.value_or(0);
    }
    if (const auto* a = FindAttr(n, "pg_name"); a && options.groups && !options.groups->empty()) {
      auto name = AttrString(*a);
      if (name && !name->empty()) {
        auto it = options.groups->find(*name);
        if (it == options.groups->end()) {
          return Status::Invalid(NodeWhere(path, w.id, rank) + ": pg_name \"" + *name +
                                 "\" is not in the communicator group configuration");
        }
        w.group = it->second;
      }
    }
    const size_t first = deps.size();
    deps.insert(deps.end(), n.data_deps().begin(), n.data_deps().end());
    deps.insert(deps.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
    std::sort(deps.begin() + first, deps.end());
    deps.erase(std::unique(deps.begin() + first, deps.end()), deps.end());
    if (deps.size() >= UINT32_MAX) {
      return Status::Invalid(NodeWhere(path, w.id, rank) + ": the trace names more than " + std::to_string(UINT32_MAX - 1) +
                             " dependencies in all; allowed: fewer");
    }
    dep_begin.push_back(static_cast<uint32_t>(deps.size()));
    g.nodes.push_back(std::move(w));
  }
  // Sort by id (issue order) and index; a trace is usually written in id order already.
  const size_t count = g.nodes.size();
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  auto by_id = [&](const WorkNode& a, const WorkNode& b) { return a.id < b.id; };
  if (!std::is_sorted(g.nodes.begin(), g.nodes.end(), by_id)) {
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return by_id(g.nodes[a], g.nodes[b]); });
    std::vector<WorkNode> sorted;
    sorted.reserve(count);
    for (uint32_t i : order) sorted.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(sorted);
  }
  // Sorted, a repeated id is next to its twin; the smallest one is reported.
  for (uint32_t i = 1; i < count; ++i) {
    if (g.nodes[i].id == g.nodes[i - 1].id) {
      return Status::Invalid(path + ": node id " + std::to_string(g.nodes[i].id) + " appears twice (rank " +
                             std::to_string(rank) + ")");
    }
  }
  // Children in compressed rows: a parent's children in increasing index, the
  // order in which the nodes name it. Ids are found by binary search (sorted).
  std::vector<uint32_t> parent_of;  // [every (node, dep) pair in node order]: the parent's index
  parent_of.reserve(deps.size());
  std::vector<uint32_t> kid_count(count + 1, 0);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t k = order[i];
    for (uint32_t e = dep_begin[k]; e < dep_begin[k + 1]; ++e) {
      const uint64_t dep = deps[e];
      auto it = std::lower_bound(g.nodes.begin(), g.nodes.end(), dep,
                                 [](const WorkNode& a, uint64_t id) { return a.id < id; });
      if (it == g.nodes.end() || it->id != dep) {
        return Status::Invalid(NodeWhere(path, g.nodes[i].id, rank) + " depends on node " + std::to_string(dep) +
                               ", which is not in the trace");
      }
      if (dep == g.nodes[i].id) {
        return Status::Invalid(NodeWhere(path, g.nodes[i].id, rank) + " depends on itself");
      }
      const uint32_t p = static_cast<uint32_t>(it - g.nodes.begin());
      parent_of.push_back(p);
      ++kid_count[p + 1];
      g.nodes[i].num_deps++;
    }
  }
  for (uint32_t i = 0; i < count; ++i) kid_count[i + 1] += kid_count[i];
  g.children.assign(parent_of.size(), 0);
  for (uint32_t i = 0; i < count; ++i) {
    g.nodes[i].child_begin = g.nodes[i].child_end = kid_count[i];
  }
  size_t pair = 0;
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t d = 0; d < g.nodes[i].num_deps; ++d) g.children[g.nodes[parent_of[pair++]].child_end++] = i;
  }
  // Cycle check (Kahn).
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
  if (seen != g.nodes.size()) {
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      if (pending[i] > 0) {
        return Status::Invalid(path + ": dependency cycle through node " + std::to_string(g.nodes[i].id) +
                               " (rank " + std::to_string(rank) + "); " + std::to_string(g.nodes.size() - seen) +
                               " node(s) can never run");
      }
    }
  }
  return g;
}

}  // namespace orrery
