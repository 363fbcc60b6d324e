#include "workload/graph.h"

#include <algorithm>

#include "core/limits.h"
#include "core/parse.h"
#include "extern/et_io.h"
#include "workload/graph_links.h"

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

// A COMM_COLL node marked is_cpu_op with neither comm_type nor comm_size: the
// host-side call of a collective (c10d::allreduce_) that converters of early
// 2024 wrote beside the GPU kernel. Refused, or with --host-collectives=replay
// a CPU op of its duration (counted in the graph's notes).
bool IsHostCollective(const NodeReader& r) {
  const auto* cpu = r.Find("is_cpu_op");
  return cpu && AttrBool(*cpu).value_or(false) && !r.Find("comm_type") && !r.Find("comm_size");
}

Status ReadHostCollective(const NodeReader& r, const GraphLoadOptions& options, WorkNode* w, GraphLoadNotes* notes) {
  if (!options.replay_host_collectives) {
    return Status::Invalid(r.Here() +
                           ": a host-side collective (COMM_COLL_NODE with is_cpu_op true and neither comm_type nor "
                           "comm_size): the CPU call of a collective as converters of early 2024 wrote it, not the "
                           "collective; --host-collectives=replay runs such nodes as CPU ops of their duration "
                           "(the trace's GPU collective nodes, if any, carry the communication)");
  }
  w->kind = NodeKind::kComp;
  w->is_cpu = true;
  ++notes->host_collectives;
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
  const auto* a = options.ignore_groups ? nullptr : r.Find("pg_name");
  if (!a) return Status::Ok();
  auto name = AttrString(*a);
  if (!name || name->empty()) return Status::Ok();
  if (!options.groups || options.groups->empty()) {
    if (w->kind != NodeKind::kColl) return Status::Ok();
    return Status::Invalid(r.Here() + ": pg_name \"" + *name +
                           "\" names a process group, but none is defined: the traces define no process group (no "
                           "METADATA node \"## process_group:init ##\", or one whose table is empty) and no "
                           "--comm-group-configuration is given; give the groups (ASTRA-sim's comm-group JSON) or drop "
                           "the attribute to run over every NPU");
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

// One node, checked, into `w`. Attributes are read (and checked) on the node
// types that use them; producers attach others freely. On an error `w` still
// holds the node's id, name and kind (INVALID for an unknown type).
Status ReadNode(ChakraProtoMsg::Node& n, const std::string& path, int rank, const GraphLoadOptions& options,
                NpuGraph* g, WorkNode* out) {
  WorkNode& w = *out;
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
    case NodeKind::kColl:
      if (IsHostCollective(r)) {
        ORRERY_RETURN_IF_ERROR(ReadHostCollective(r, options, &w, &g->notes));
      } else {
        ORRERY_RETURN_IF_ERROR(ReadCollectiveFields(r, options, &w, &g->involved));
      }
      break;
    case NodeKind::kSend:
    case NodeKind::kRecv: ORRERY_RETURN_IF_ERROR(ReadPeerFields(r, options, &w)); break;
    case NodeKind::kInvalid:
    case NodeKind::kMetadata: break;
  }
  ORRERY_RETURN_IF_ERROR(ReadGroup(r, options, &w));
  ORRERY_RETURN_IF_ERROR(ReadCommStream(r, &w));
  return Status::Ok();
}

// Every node of the file, checked, with its dependencies as read; false when
// the load must stop (a record that does not read ends the file's nodes).
bool ReadNodes(EtReader* reader, int rank, const GraphLoadOptions& options, NpuGraph* g, DependencyLists* deps,
               ProblemSink* sink) {
  ChakraProtoMsg::Node n;
  while (true) {
    Result<bool> more = reader->Next(&n);
    if (!more.ok()) {
      sink->Take(more.status());
      return false;
    }
    if (!more.value()) return true;
    WorkNode w;
    if (Status st = ReadNode(n, g->path, rank, options, g, &w); !st.ok() && !sink->Take(std::move(st))) {
      return false;
    }
    if (w.comm_root < 0 && IsRooted(w.collective) && w.collective != CollectiveKind::kBarrier &&
        g->notes.rootless++ == 0) {
      g->notes.first_rootless = w.id;
    }
    if (Status st = AppendDependencies(n, NodeWhere(g->path, w.id, rank), deps); !st.ok()) {
      sink->Take(std::move(st));
      return false;
    }
    g->nodes.push_back(std::move(w));
  }
}

}  // namespace

Result<NpuGraph> LoadNpuGraph(const std::string& path, int rank, const GraphLoadOptions& options) {
  ProblemSink sink(options.problems);
  const uint64_t before = sink.listed();
  NpuGraph g;
  g.rank = rank;
  g.path = path;
  EtReader reader;
  DependencyLists deps;
  if (Status st = reader.Open(path); !st.ok()) {
    if (!sink.Take(st)) return sink.status();
  } else if (ReadNodes(&reader, rank, options, &g, &deps, &sink)) {
    // Listing, the edges are checked even after a node's problem (the node is kept as far as it was read).
    if (LinkGraph(&g, deps, options, &sink) && sink.listed() == before) return g;
  }
  if (!options.problems) return sink.status();
  return Status::Invalid(path + ": " + std::to_string(sink.listed() - before) + " problem(s) (rank " +
                         std::to_string(rank) + ")");
}

}  // namespace orrery
