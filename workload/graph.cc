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

// One node's attributes, read checked: every integer goes through the checked
// read (-1 is not 2^64-1, NaN is not 0), and every error names the file, the
// node and the rank (built only on an error).
class NodeReader {
 public:
  NodeReader(const ChakraProtoMsg::Node& node, const std::string& path, uint64_t id, int rank, NodeKind kind)
      : node_(node), path_(path), id_(id), rank_(rank), kind_(kind) {}
  std::string Here() const { return NodeWhere(path_, id_, rank_); }
  Where At(const char* key) const { return Where{"", 0, Here() + ": " + key}; }
  const ChakraProtoMsg::AttributeProto* Find(const char* key) const { return FindAttr(node_, key); }

  // An integer attribute in 0..max; nullopt when the node has none.
  Result<std::optional<uint64_t>> Read(const char* key, uint64_t max) const {
    const auto* a = Find(key);
    if (!a) return std::optional<uint64_t>();
    auto v = AttrUintChecked(*a, Where{}, 0, max);
    if (!v.ok()) return AttrUintChecked(*a, At(key), 0, max).status();  // again, to name the node
    return std::optional<uint64_t>(v.value());
  }

  // A number in (0, 1] (an efficiency); 1 when the node has none.
  Result<float> ReadFraction(const char* key) const {
    const auto* a = Find(key);
    if (!a) return 1.0F;
    ORRERY_PARSE_OR_RETURN(const double v, AttrDoubleChecked(*a, At(key), DoubleRange{0, 1, true}));
    return static_cast<float>(v);
  }

  // The same, required.
  Result<uint64_t> Need(const char* key, uint64_t max) const {
    if (!Find(key)) return Status::Invalid(Here() + ": " + NodeTypeName(kind_) + " needs attribute '" + key + "'");
    ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> v, Read(key, max));
    return *v;
  }

 private:
  const ChakraProtoMsg::Node& node_;
  const std::string& path_;
  uint64_t id_;
  int rank_;
  NodeKind kind_;
};

// COMP: is_cpu_op, num_ops, output_bytes, tensor_size, compute_efficiency, memory_efficiency.
Status ReadComputeFields(const NodeReader& r, WorkNode* w) {
  if (const auto* a = r.Find("is_cpu_op")) {
    const auto b = AttrBool(*a);
    if (!b) return ValueError(r.At("is_cpu_op"), "(not a switch)", "not a boolean", "true, false, 0 or 1");
    w->is_cpu = *b;
  }
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> num_ops, r.Read("num_ops", kMaxNumOps));
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> output_bytes, r.Read("output_bytes", kMaxBytes));
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> tensor_size, r.Read("tensor_size", kMaxBytes));
  w->num_ops = num_ops.value_or(0);
  w->has_num_ops = num_ops.has_value();
  w->output_bytes = output_bytes.value_or(0);
  w->tensor_size = tensor_size.value_or(0);
  ORRERY_PARSE_OR_RETURN(w->compute_efficiency, r.ReadFraction("compute_efficiency"));
  ORRERY_PARSE_OR_RETURN(w->memory_efficiency, r.ReadFraction("memory_efficiency"));
  return Status::Ok();
}

// MEM_LOAD, MEM_STORE: tensor_size, memory_tier.
Status ReadMemoryFields(const NodeReader& r, WorkNode* w) {
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> tensor_size, r.Read("tensor_size", kMaxBytes));
  w->tensor_size = tensor_size.value_or(0);
  if (const auto* a = r.Find("memory_tier")) {
    const auto tier = AttrString(*a);
    if (!tier || (*tier != "local" && *tier != "remote")) {
      return Status::Invalid(r.Here() + ": memory_tier = \"" + tier.value_or("?") +
                             "\": valid values are local, remote");
    }
    w->local_tier = *tier == "local";
  }
  return Status::Ok();
}

// Decodes comm_type into the node's CollectiveKind, the one place a trace's
// number becomes the enum. A barrier needs no comm_size; any other collective
// does, and a missing comm_size is reported before a comm_type out of range.
Status ReadCollectiveKind(const NodeReader& r, WorkNode* w) {
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> raw, r.Read("comm_type", UINT64_MAX));
  const std::optional<CollectiveKind> kind = raw ? CollectiveKindFromChakra(*raw) : std::nullopt;
  if (!kind || CarriesBytes(*kind)) {
    ORRERY_PARSE_OR_RETURN(w->comm_size, r.Need("comm_size", kMaxBytes));
  }
  ORRERY_PARSE_OR_RETURN(const uint64_t type, r.Need("comm_type", UINT64_MAX));
  if (!kind) {
    std::string valid;
    for (int k = 0; k < kNumCollectiveKinds; ++k) {
      valid += (k ? ", " : "") + std::to_string(k) + " " + kCollectiveNames[k];
    }
    return Status::Invalid(r.Here() + ": comm_type " + std::to_string(type) +
                           " is not a Chakra CollectiveCommType; valid: " + valid);
  }
  w->collective = *kind;
  return Status::Ok();
}

// COMM_COLL: comm_type, comm_size, the root ('root', else 'comm_src') and involved_dim.
Status ReadCollectiveFields(const NodeReader& r, const GraphLoadOptions& options, WorkNode* w,
                            std::vector<std::vector<bool>>* involved) {
  ORRERY_RETURN_IF_ERROR(ReadCollectiveKind(r, w));
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> root_attr, r.Read("root", UINT64_MAX));
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> src_attr, r.Read("comm_src", UINT64_MAX));
  if (auto root = root_attr ? root_attr : src_attr) {
    if (*root >= static_cast<uint64_t>(options.num_npus)) {
      return Status::Invalid(r.Here() + ": root rank " + std::to_string(*root) + " is outside the network's ranks 0.." +
                             std::to_string(options.num_npus - 1));
    }
    w->comm_root = static_cast<int>(*root);
  }
  if (const auto* a = r.Find("involved_dim")) {
    auto list = AttrBoolList(*a);
    if (!list) return Status::Invalid(r.Here() + ": attribute 'involved_dim' must be a bool list");
    if (static_cast<int>(list->size()) > options.num_dims) {
      return Status::Invalid(r.Here() + ": involved_dim has " + std::to_string(list->size()) +
                             " entries but the network has " + std::to_string(options.num_dims) +
                             " dimension(s); give at most one entry per dimension");
    }
    w->involved = static_cast<int>(involved->size());
    involved->push_back(*list);
  }
  return Status::Ok();
}

// COMM_SEND, COMM_RECV: comm_size, the peer (comm_dst, comm_src) and comm_tag.
Status ReadPeerFields(const NodeReader& r, const GraphLoadOptions& options, WorkNode* w) {
  ORRERY_PARSE_OR_RETURN(w->comm_size, r.Need("comm_size", kMaxBytes));
  const bool send = w->kind == NodeKind::kSend;
  const char* key = send ? "comm_dst" : "comm_src";
  ORRERY_PARSE_OR_RETURN(const uint64_t peer, r.Need(key, UINT64_MAX));
  if (peer >= static_cast<uint64_t>(options.num_npus)) {
    return Status::Invalid(r.Here() + ": " + key + " = " + std::to_string(peer) +
                           " is outside the network's ranks 0.." + std::to_string(options.num_npus - 1));
  }
  (send ? w->comm_dst : w->comm_src) = static_cast<int>(peer);
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> tag, r.Read("comm_tag", UINT64_MAX));
  w->comm_tag = tag.value_or(0);
  return Status::Ok();
}

// Any node: pg_name. With no communicator groups at all, a collective's
// pg_name is an error (it would otherwise run over every NPU); other kinds
// need no group and keep their pg_name unread.
Status ReadGroup(const NodeReader& r, const GraphLoadOptions& options, WorkNode* w) {
  const auto* a = r.Find("pg_name");
  if (!a) return Status::Ok();
  auto name = AttrString(*a);
  if (!name || name->empty()) return Status::Ok();
  if (!options.groups || options.groups->empty()) {
    if (w->kind != NodeKind::kColl) return Status::Ok();
    return Status::Invalid(r.Here() + ": pg_name \"" + *name +
                           "\" names a process group, but none is defined: the traces have no process-group metadata "
                           "(a METADATA node \"## process_group:init ##\") and no --comm-group-configuration is "
                           "given; give the groups (ASTRA-sim's comm-group JSON) or drop the attribute to run over "
                           "every NPU");
  }
  auto it = options.groups->find(*name);
  if (it == options.groups->end()) {
    std::string known;
    size_t listed = 0;
    for (const auto& [g, index] : *options.groups) {
      if (listed++ == 8) {
        known += " and " + std::to_string(options.groups->size() - 8) + " more";
        break;
      }
      known += (known.empty() ? "" : ", ") + ("\"" + g + "\"");
    }
    return Status::Invalid(r.Here() + ": pg_name \"" + *name +
                           "\" is not in the communicator group configuration (groups: " + known + ")");
  }
  w->group = it->second;
  return Status::Ok();
}

// COMM_COLL, COMM_SEND, MEM_LOAD, MEM_STORE: comm_stream, the node's
// communication stream (its own slot); 0 when absent. A receive takes no slot:
// the attribute is not read there (nor on any other kind).
Status ReadCommStream(const NodeReader& r, WorkNode* w) {
  const bool takes_slot = w->kind == NodeKind::kColl || w->kind == NodeKind::kSend || IsMemoryAccess(w->kind);
  if (!takes_slot) return Status::Ok();
  ORRERY_PARSE_OR_RETURN(const std::optional<uint64_t> stream, r.Read("comm_stream", kMaxCommStreams - 1));
  w->comm_stream = static_cast<uint8_t>(stream.value_or(0));
  return Status::Ok();
}

// One node, checked. Attributes are read (and checked) on the node types that
// use them; producers attach others freely.
Result<WorkNode> ReadNode(ChakraProtoMsg::Node& n, const std::string& path, int rank, const GraphLoadOptions& options,
                          std::vector<std::vector<bool>>* involved) {
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
  const NodeReader r(n, path, w.id, rank, w.kind);
  if (n.duration_micros() > kMaxDurationMicros) {
    return ValueError(r.At("duration_micros"), std::to_string(n.duration_micros()), "out of range",
                      DescribeUintRange(0, kMaxDurationMicros));
  }
  w.duration_micros = n.duration_micros();
  switch (w.kind) {
    case NodeKind::kComp: ORRERY_RETURN_IF_ERROR(ReadComputeFields(r, &w)); break;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: ORRERY_RETURN_IF_ERROR(ReadMemoryFields(r, &w)); break;
    case NodeKind::kColl: ORRERY_RETURN_IF_ERROR(ReadCollectiveFields(r, options, &w, involved)); break;
    case NodeKind::kSend:
    case NodeKind::kRecv: ORRERY_RETURN_IF_ERROR(ReadPeerFields(r, options, &w)); break;
    case NodeKind::kInvalid:
    case NodeKind::kMetadata: break;
  }
  ORRERY_RETURN_IF_ERROR(ReadGroup(r, options, &w));
  ORRERY_RETURN_IF_ERROR(ReadCommStream(r, &w));
  return w;
}

// Every node's dependencies (data and control, sorted, without repeats) in one
// array: node k's are [begin[k], begin[k + 1]), in read order.
struct DependencyLists {
  std::vector<uint64_t> ids;
  std::vector<uint32_t> begin{0};
};

Status AppendDependencies(const ChakraProtoMsg::Node& n, const std::string& path, uint64_t id, int rank,
                          DependencyLists* deps) {
  std::vector<uint64_t>& ids = deps->ids;
  const size_t first = ids.size();
  ids.insert(ids.end(), n.data_deps().begin(), n.data_deps().end());
  ids.insert(ids.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
  std::sort(ids.begin() + first, ids.end());
  ids.erase(std::unique(ids.begin() + first, ids.end()), ids.end());
  if (ids.size() >= UINT32_MAX) {
    return Status::Invalid(NodeWhere(path, id, rank) + ": the trace names more than " + std::to_string(UINT32_MAX - 1) +
                           " dependencies in all; allowed: fewer");
  }
  deps->begin.push_back(static_cast<uint32_t>(ids.size()));
  return Status::Ok();
}

// Sorts the nodes by id (issue order; a trace is usually written in id order
// already). Returns each sorted position's read position.
std::vector<uint32_t> SortById(NpuGraph* g) {
  const size_t count = g->nodes.size();
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  auto by_id = [](const WorkNode& a, const WorkNode& b) { return a.id < b.id; };
  if (!std::is_sorted(g->nodes.begin(), g->nodes.end(), by_id)) {
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return by_id(g->nodes[a], g->nodes[b]); });
    std::vector<WorkNode> sorted;
    sorted.reserve(count);
    for (uint32_t i : order) sorted.push_back(std::move(g->nodes[i]));
    g->nodes = std::move(sorted);
  }
  return order;
}

// Sorted, a repeated id is next to its twin; the smallest one is reported.
Status CheckUniqueIds(const NpuGraph& g) {
  for (size_t i = 1; i < g.nodes.size(); ++i) {
    if (g.nodes[i].id == g.nodes[i - 1].id) {
      return Status::Invalid(g.path + ": node id " + std::to_string(g.nodes[i].id) + " appears twice (rank " +
                             std::to_string(g.rank) + ")");
    }
  }
  return Status::Ok();
}

// Each (node, dependency) pair in sorted node order: the parent's index; counts
// the node's dependencies. Ids are found by binary search (sorted).
Result<std::vector<uint32_t>> ResolveParents(NpuGraph* g, const std::vector<uint32_t>& order,
                                             const DependencyLists& deps) {
  std::vector<uint32_t> parent_of;
  parent_of.reserve(deps.ids.size());
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    const uint32_t k = order[i];
    for (uint32_t e = deps.begin[k]; e < deps.begin[k + 1]; ++e) {
      const uint64_t dep = deps.ids[e];
      auto it = std::lower_bound(g->nodes.begin(), g->nodes.end(), dep,
                                 [](const WorkNode& a, uint64_t id) { return a.id < id; });
      if (it == g->nodes.end() || it->id != dep) {
        return Status::Invalid(NodeWhere(g->path, g->nodes[i].id, g->rank) + " depends on node " + std::to_string(dep) +
                               ", which is not in the trace");
      }
      if (dep == g->nodes[i].id)
        return Status::Invalid(NodeWhere(g->path, g->nodes[i].id, g->rank) + " depends on itself");
      parent_of.push_back(static_cast<uint32_t>(it - g->nodes.begin()));
      g->nodes[i].num_deps++;
    }
  }
  return parent_of;
}

// Children in compressed rows: a parent's children in increasing index, the
// order in which the nodes name it.
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

// Cycle check (Kahn).
Status CheckAcyclic(const NpuGraph& g) {
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
  if (seen == g.nodes.size()) return Status::Ok();
  const auto stuck = std::find_if(pending.begin(), pending.end(), [](uint32_t p) { return p > 0; });
  return Status::Invalid(g.path + ": dependency cycle through node " +
                         std::to_string(g.nodes[stuck - pending.begin()].id) + " (rank " + std::to_string(g.rank) +
                         "); " + std::to_string(g.nodes.size() - seen) + " node(s) can never run");
}

}  // namespace

Result<NpuGraph> LoadNpuGraph(const std::string& path, int rank, const GraphLoadOptions& options) {
  EtReader reader;
  ORRERY_RETURN_IF_ERROR(reader.Open(path));
  NpuGraph g;
  g.rank = rank;
  g.path = path;
  DependencyLists deps;
  ChakraProtoMsg::Node n;
  while (true) {
    ORRERY_PARSE_OR_RETURN(const bool more, reader.Next(&n));
    if (!more) break;
    ORRERY_PARSE_OR_RETURN(WorkNode w, ReadNode(n, path, rank, options, &g.involved));
    if (w.comm_root < 0 && IsRooted(w.collective) && w.collective != CollectiveKind::kBarrier &&
        g.notes.rootless++ == 0) {
      g.notes.first_rootless = w.id;
    }
    ORRERY_RETURN_IF_ERROR(AppendDependencies(n, path, w.id, rank, &deps));
    g.nodes.push_back(std::move(w));
  }
  const std::vector<uint32_t> order = SortById(&g);
  ORRERY_RETURN_IF_ERROR(CheckUniqueIds(g));
  ORRERY_PARSE_OR_RETURN(const std::vector<uint32_t> parent_of, ResolveParents(&g, order, deps));
  LinkChildren(&g, parent_of);
  ORRERY_RETURN_IF_ERROR(CheckAcyclic(g));
  return g;
}

}  // namespace orrery
