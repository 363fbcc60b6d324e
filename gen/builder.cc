#include "gen/builder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>

#include "core/output_file.h"
#include "extern/et_io.h"
#include "extern/process_groups.h"

namespace orrery::gen {

const char* AxisName(Axis a) {
  static const char* kNames[] = {"tp", "cp", "ep", "dp", "pp"};
  return kNames[static_cast<int>(a)];
}

std::string AxisSetName(AxisSet set) {
  std::string s;
  for (int a = 0; a < kNumAxes; ++a) {
    if (set & (1u << a)) s += std::string(s.empty() ? "" : "+") + AxisName(static_cast<Axis>(a));
  }
  return s;
}

Layout::Layout(std::array<int64_t, kNumAxes> sizes, std::array<Axis, kNumAxes> order) : sizes_(sizes), order_(order) {
  int64_t stride = 1;
  for (Axis a : order_) {
    strides_[static_cast<int>(a)] = stride;
    stride *= sizes_[static_cast<int>(a)];
  }
  npus_ = stride;
  int64_t next = 1;
  auto add = [&](AxisSet set) {
    kinds_.push_back({set, next});
    next += npus_ / GroupSize(set);
  };
  for (int a = 0; a < kNumAxes; ++a) {
    if (sizes_[a] > 1) add(Axes(static_cast<Axis>(a)));
  }
  for (AxisSet set : {kDenseDp, kExpertDp}) {
    const AxisSet e = Effective(set);
    if ((e & (e - 1)) == 0) continue;  // one axis or none: a single axis's groups
    bool known = false;
    for (const auto& k : kinds_) known = known || k.first == e;
    if (!known) add(e);
  }
}

AxisSet Layout::Effective(AxisSet set) const {
  AxisSet e = 0;
  for (int a = 0; a < kNumAxes; ++a) {
    if ((set & (1u << a)) && sizes_[a] > 1) e |= static_cast<AxisSet>(1u << a);
  }
  return e;
}

int64_t Layout::GroupSize(AxisSet set) const {
  int64_t n = 1;
  for (int a = 0; a < kNumAxes; ++a) {
    if (set & (1u << a)) n *= sizes_[a];
  }
  return n;
}

int64_t Layout::Coord(int64_t rank, Axis a) const {
  const int i = static_cast<int>(a);
  return rank / strides_[i] % sizes_[i];
}

int64_t Layout::With(int64_t rank, Axis a, int64_t coord_on_a) const {
  const int i = static_cast<int>(a);
  return rank + (coord_on_a - Coord(rank, a)) * strides_[i];
}

std::vector<int> Layout::GroupRanks(int64_t rank, AxisSet set) const {
  // Every combination of coordinates on the set's axes, the innermost axis
  // fastest: rank order.
  std::vector<int> out{static_cast<int>(rank)};
  for (Axis a : order_) {
    if (!(set & Axes(a)) || size(a) <= 1) continue;
    std::vector<int> next;
    for (int64_t c = 0; c < size(a); ++c) {
      for (int r : out) next.push_back(static_cast<int>(With(r, a, c)));
    }
    out = std::move(next);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t Layout::GroupIndex(int64_t rank, AxisSet set) const {
  int64_t index = 0, radix = 1;
  for (Axis b : order_) {
    if (set & Axes(b)) continue;
    index += Coord(rank, b) * radix;
    radix *= size(b);
  }
  return index;
}

std::string Layout::GroupName(int64_t rank, AxisSet set) const {
  const AxisSet e = Effective(set);
  for (const auto& [kind, first] : kinds_) {
    if (kind == e) return std::to_string(first + GroupIndex(rank, e));
  }
  return "";
}

std::map<std::string, std::vector<int>> Layout::AllGroups() const {
  std::map<std::string, std::vector<int>> out;
  for (const auto& [kind, first] : kinds_) {
    for (int64_t r = 0; r < npus_; ++r) {
      bool lowest = true;
      for (int a = 0; a < kNumAxes; ++a)
        lowest = lowest && (!(kind & (1u << a)) || Coord(r, static_cast<Axis>(a)) == 0);
      if (lowest) out[GroupName(r, kind)] = GroupRanks(r, kind);
    }
  }
  return out;
}

std::string Layout::OrderText() const {
  std::string s;
  for (Axis a : order_) s += std::string(s.empty() ? "" : "-") + AxisName(a);
  return s;
}

NodeRef GraphBuilder::Add(GenNode n, std::vector<NodeRef> deps) {
  n.deps = std::move(deps);
  nodes_.push_back(std::move(n));
  return static_cast<NodeRef>(nodes_.size() - 1);
}

NodeRef GraphBuilder::Compute(std::string name, uint64_t num_ops, uint64_t tensor_bytes, std::vector<NodeRef> deps) {
  GenNode n;
  n.kind = GenKind::kComp;
  n.name = std::move(name);
  n.num_ops = num_ops;
  n.tensor_size = tensor_bytes;
  return Add(std::move(n), std::move(deps));
}

NodeRef GraphBuilder::Compute(std::string name, uint64_t num_ops, uint64_t tensor_bytes, float compute_efficiency,
                              float memory_efficiency, std::vector<NodeRef> deps) {
  const NodeRef r = Compute(std::move(name), num_ops, tensor_bytes, std::move(deps));
  nodes_[r].compute_efficiency = compute_efficiency;
  nodes_[r].memory_efficiency = memory_efficiency;
  return r;
}

NodeRef GraphBuilder::Timed(std::string name, uint64_t duration_us, uint64_t output_bytes, std::vector<NodeRef> deps) {
  GenNode n;
  n.kind = GenKind::kComp;
  n.name = std::move(name);
  n.timed = true;
  n.duration_micros = duration_us;
  n.output_bytes = output_bytes;
  return Add(std::move(n), std::move(deps));
}

int CommStreamOf(AxisSet effective) {
  if ((effective & Axes(Axis::kDp)) || __builtin_popcount(effective) >= 2) return 3;
  if (effective & Axes(Axis::kCp)) return 1;
  if (effective & Axes(Axis::kEp)) return 2;
  if (effective & Axes(Axis::kPp)) return 4;
  return 0;  // TP, or a group of one
}

int NodeStream(const Layout& layout, const GenNode& n) {
  switch (n.kind) {
    case GenKind::kColl: return CommStreamOf(layout.Effective(n.group));
    case GenKind::kSend: return CommStreamOf(Axes(n.axis));
    case GenKind::kMemLoad:
    case GenKind::kMemStore: return kMemoryStream;
    default: return 0;  // compute; a receive takes no slot
  }
}

NodeRef GraphBuilder::Collective(std::string name, Coll type, uint64_t bytes, AxisSet group,
                                 std::vector<NodeRef> deps) {
  GenNode n;
  n.kind = GenKind::kColl;
  n.name = std::move(name);
  n.coll = type;
  n.bytes = bytes;
  n.group = group;
  return Add(std::move(n), std::move(deps));
}

NodeRef GraphBuilder::Send(std::string name, Axis axis, int peer_offset, uint64_t bytes, uint64_t tag,
                           std::vector<NodeRef> deps) {
  GenNode n;
  n.kind = GenKind::kSend;
  n.name = std::move(name);
  n.axis = axis;
  n.peer_offset = peer_offset;
  n.bytes = bytes;
  n.tag = tag;
  return Add(std::move(n), std::move(deps));
}

NodeRef GraphBuilder::Recv(std::string name, Axis axis, int peer_offset, uint64_t bytes, uint64_t tag,
                           std::vector<NodeRef> deps) {
  NodeRef r = Send(std::move(name), axis, peer_offset, bytes, tag, std::move(deps));
  nodes_[r].kind = GenKind::kRecv;
  return r;
}

NodeRef GraphBuilder::MemLoad(std::string name, uint64_t bytes, std::vector<NodeRef> deps) {
  GenNode n;
  n.kind = GenKind::kMemLoad;
  n.name = std::move(name);
  n.tensor_size = bytes;
  return Add(std::move(n), std::move(deps));
}

NodeRef GraphBuilder::MemStore(std::string name, uint64_t bytes, std::vector<NodeRef> deps) {
  NodeRef r = MemLoad(std::move(name), bytes, std::move(deps));
  nodes_[r].kind = GenKind::kMemStore;
  return r;
}

namespace {

// The peer's coordinate wraps around the axis (rings: the last rank's next is the first).
int Peer(const Layout& l, int rank, const GenNode& n) {
  const int64_t size = l.size(n.axis);
  const int64_t c = ((l.Coord(rank, n.axis) + n.peer_offset) % size + size) % size;
  return static_cast<int>(l.With(rank, n.axis, c));
}

// Attributes in the fields Chakra's own tools write them (its converter and
// generator; the feeder ASTRA-sim reads them through): is_cpu_op a bool,
// num_ops, comm_type and comm_size int64, tensor_size uint64, comm_src,
// comm_dst and comm_tag int32 (int64 beyond 2^31 - 1); Orrery's own
// (output_bytes, comm_stream) uint64.
void Attr(ChakraProtoMsg::Node* node, const char* name, uint64_t v) {
  auto* a = node->add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}

void Int64Attr(ChakraProtoMsg::Node* node, const char* name, uint64_t v) {
  auto* a = node->add_attr();
  a->set_name(name);
  a->set_int64_val(static_cast<int64_t>(v));  // every value the generator makes is below 2^63
}

void Int32Attr(ChakraProtoMsg::Node* node, const char* name, uint64_t v) {
  if (v > static_cast<uint64_t>(INT32_MAX)) return Int64Attr(node, name, v);
  auto* a = node->add_attr();
  a->set_name(name);
  a->set_int32_val(static_cast<int32_t>(v));
}

void SetComp(const GenNode& g, ChakraProtoMsg::Node* n) {
  n->set_type(ChakraProtoMsg::COMP_NODE);
  if (!g.timed) {
    Int64Attr(n, "num_ops", g.num_ops);
    Attr(n, "tensor_size", g.tensor_size);
  }
  if (g.output_bytes) Attr(n, "output_bytes", g.output_bytes);
  for (const auto& [name, v] :
       {std::pair{"compute_efficiency", g.compute_efficiency}, std::pair{"memory_efficiency", g.memory_efficiency}}) {
    if (v == 1) continue;
    auto* a = n->add_attr();
    a->set_name(name);
    a->set_double_val(v);
  }
  if (g.timed || g.duration_micros) n->set_duration_micros(g.duration_micros);
}

void SetColl(const Layout& l, int rank, const GenNode& g, ChakraSpelling spelling, ChakraProtoMsg::Node* n) {
  n->set_type(ChakraProtoMsg::COMM_COLL_NODE);
  Int64Attr(n, "comm_type", static_cast<uint64_t>(g.coll));
  Int64Attr(n, "comm_size", g.bytes);
  if (spelling == ChakraSpelling::kAstraSimExample) return;
  auto* a = n->add_attr();
  a->set_name("pg_name");
  a->set_string_val(l.GroupName(rank, g.group));
}

void SetSendRecv(const Layout& l, int rank, const GenNode& g, ChakraProtoMsg::Node* n) {
  const bool send = g.kind == GenKind::kSend;
  n->set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  Int32Attr(n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(Peer(l, rank, g)));
  Int64Attr(n, "comm_size", g.bytes);
  Int32Attr(n, "comm_tag", g.tag);
}

ChakraProtoMsg::Node ToChakra(const Layout& l, int rank, uint32_t id, const GenNode& g, ChakraSpelling spelling,
                              bool comm_streams) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name(g.name);
  for (NodeRef d : g.deps) n.add_data_deps(d);
  for (NodeRef d : g.ctrl_deps) n.add_ctrl_deps(d);
  auto* cpu = n.add_attr();  // every generated node runs on the GPU (Chakra's feeder reads an absent one as a CPU op)
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(false);
  switch (g.kind) {
    case GenKind::kComp: SetComp(g, &n); break;
    case GenKind::kColl: SetColl(l, rank, g, spelling, &n); break;
    case GenKind::kSend:
    case GenKind::kRecv: SetSendRecv(l, rank, g, &n); break;
    case GenKind::kMemLoad:
    case GenKind::kMemStore:
      n.set_type(g.kind == GenKind::kMemLoad ? ChakraProtoMsg::MEM_LOAD_NODE : ChakraProtoMsg::MEM_STORE_NODE);
      Attr(&n, "tensor_size", g.tensor_size);
      break;
    default: break;  // the generator makes no other kind
  }
  if (comm_streams && spelling == ChakraSpelling::kGenerated) {
    if (const int stream = NodeStream(l, g)) Attr(&n, "comm_stream", static_cast<uint64_t>(stream));
  }
  return n;
}

// The process-group table as Chakra's converter carries PyTorch's: a METADATA
// node "## process_group:init ##" whose inputs.values is a Python list of one
// string, the JSON table (extern/process_groups.h reads it). The last node:
// its id follows the graph's, which stay as they are in memory.
ChakraProtoMsg::Node ProcessGroupNode(const Layout& layout, uint32_t id) {
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  for (const auto& [name, ranks] : layout.AllGroups()) {
    table.push_back({{"pg_name", name}, {"ranks", ranks}, {"group_size", ranks.size()}});
  }
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name(kProcessGroupNodeName);
  n.set_type(ChakraProtoMsg::METADATA_NODE);
  n.mutable_inputs()->set_values("['" + table.dump() + "']");  // names are digits: no quote to escape
  n.mutable_inputs()->set_shapes("[[]]");
  n.mutable_inputs()->set_types("['String']");
  return n;
}

}  // namespace

std::string CommGroupJson(const Layout& layout) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, ranks] : layout.AllGroups()) j[name] = ranks;
  return j.dump() + "\n";
}

Status WriteChakra(const Workload& w, const std::string& prefix, ChakraSpelling spelling) {
  std::optional<ChakraProtoMsg::Node> pg_table;  // the same in every rank's file, after its nodes
  if (spelling == ChakraSpelling::kGenerated && w.pg_metadata && !w.layout.AllGroups().empty()) {
    pg_table = ProcessGroupNode(w.layout, 0);
  }
  for (int r = 0; r < w.layout.npus(); ++r) {
    const GraphBuilder& g = w.classes[w.class_of_rank[r]];
    EtWriter out;
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    ChakraProtoMsg::GlobalMetadata meta;
    meta.set_version("0.0.4");
    ORRERY_RETURN_IF_ERROR(out.Open(path, meta));
    for (uint32_t i = 0; i < g.nodes().size(); ++i) {
      ORRERY_RETURN_IF_ERROR(out.Write(ToChakra(w.layout, r, i, g.nodes()[i], spelling, w.comm_streams)));
    }
    if (pg_table) {
      pg_table->set_id(g.nodes().size());
      ORRERY_RETURN_IF_ERROR(out.Write(*pg_table));
    }
    ORRERY_RETURN_IF_ERROR(out.Close());
  }
  if (spelling == ChakraSpelling::kAstraSimExample) return Status::Ok();
  const std::string path = prefix + ".comm_groups.json";
  return WriteFileWhole(path, CommGroupJson(w.layout));
}

void RankPeers(const Workload& w, int rank, std::vector<int>* peers) {
  peers->clear();
  for (const GenNode& s : w.classes[w.class_of_rank[rank]].nodes()) {
    if (s.kind == GenKind::kSend || s.kind == GenKind::kRecv) peers->push_back(Peer(w.layout, rank, s));
  }
}

namespace {

// The simulator's node for generated node `i` of `rank`; its dependencies are counted, not linked.
Result<WorkNode> ToWorkNode(const Workload& w, int rank, uint32_t i, const GenNode& s,
                            const std::map<std::string, int>& groups, const std::string& path) {
  WorkNode n;
  n.id = i;
  n.name = s.name;
  n.num_deps = static_cast<uint32_t>(s.deps.size() + s.ctrl_deps.size());
  if (w.comm_streams) n.comm_stream = static_cast<uint8_t>(NodeStream(w.layout, s));
  switch (s.kind) {
    case GenKind::kComp:
      n.kind = NodeKind::kComp;
      n.num_ops = s.num_ops;
      n.has_num_ops = !s.timed;  // as WriteChakra spells it: a timed node has no num_ops
      n.tensor_size = s.tensor_size;
      n.output_bytes = s.output_bytes;
      n.duration_micros = s.duration_micros;
      n.compute_efficiency = s.compute_efficiency;
      n.memory_efficiency = s.memory_efficiency;
      break;
    case GenKind::kColl: {
      n.kind = NodeKind::kColl;
      n.collective = s.coll;
      n.comm_size = s.bytes;
      auto it = groups.find(w.layout.GroupName(rank, s.group));
      if (it == groups.end()) {
        return Status::Invalid(path + ", node " + std::to_string(i) + ": group of axes " + AxisSetName(s.group) +
                               " is not configured");
      }
      n.group = it->second;
      break;
    }
    case GenKind::kSend:
    case GenKind::kRecv:
      n.kind = s.kind == GenKind::kSend ? NodeKind::kSend : NodeKind::kRecv;
      (s.kind == GenKind::kSend ? n.comm_dst : n.comm_src) = Peer(w.layout, rank, s);
      n.comm_size = s.bytes;
      n.comm_tag = s.tag;
      break;
    case GenKind::kMemLoad:
    case GenKind::kMemStore:
      n.kind = s.kind == GenKind::kMemLoad ? NodeKind::kMemLoad : NodeKind::kMemStore;
      n.tensor_size = s.tensor_size;
      break;
  }
  return n;
}

}  // namespace

Result<NpuGraph> ToNpuGraph(const Workload& w, int rank, const std::map<std::string, int>& groups) {
  const GraphBuilder& b = w.classes[w.class_of_rank[rank]];
  NpuGraph g;
  g.rank = rank;
  g.path = "(generated rank " + std::to_string(rank) + ")";
  std::vector<std::vector<uint32_t>> kids(b.nodes().size());
  for (uint32_t i = 0; i < b.nodes().size(); ++i) {
    const GenNode& s = b.nodes()[i];
    Result<WorkNode> n = ToWorkNode(w, rank, i, s, groups, g.path);
    if (!n.ok()) return n.status();
    for (NodeRef d : s.deps) kids[d].push_back(i);
    for (NodeRef d : s.ctrl_deps) kids[d].push_back(i);
    g.nodes.push_back(std::move(n.value()));
  }
  // Children in compressed rows, each parent's in increasing index (as the trace loader links them).
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    g.nodes[i].child_begin = static_cast<uint32_t>(g.children.size());
    g.children.insert(g.children.end(), kids[i].begin(), kids[i].end());
    g.nodes[i].child_end = static_cast<uint32_t>(g.children.size());
  }
  return g;
}

}  // namespace orrery::gen
