// A typed builder for generated per-rank graphs and the layout of ranks on the
// parallel axes. Ranks that run the same graph form a class held once; groups
// and peers are symbolic (an axis, an offset along it) and resolved per rank
// only when a class is written out (Chakra ET + comm-group JSON) or converted
// to the simulator's in-memory graph. No protobuf here.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "workload/graph.h"

namespace orrery::gen {

enum class Axis : int { kTp = 0, kCp = 1, kEp = 2, kDp = 3, kPp = 4 };
inline constexpr int kNumAxes = 5;
const char* AxisName(Axis a);

// A set of axes (bit i: Axis i): a collective's group spans the ranks that
// differ only on these axes. The data-parallel groups span several axes:
// dense gradients reduce over cp·ep·dp, expert gradients over cp·dp
// (Megatron-Core: EP and CP ranks see different tokens of the batch).
using AxisSet = uint8_t;
constexpr AxisSet Axes(Axis a) { return static_cast<AxisSet>(1u << static_cast<int>(a)); }
constexpr AxisSet kDenseDp = Axes(Axis::kCp) | Axes(Axis::kEp) | Axes(Axis::kDp);
constexpr AxisSet kExpertDp = Axes(Axis::kCp) | Axes(Axis::kDp);
std::string AxisSetName(AxisSet set);  // "cp+ep+dp"

// The communication stream (Chakra attribute comm_stream: its own communication
// slot per NPU, workload/executor.h) of a node by its communicator kind, as
// frameworks give each process group its own stream: TP 0, CP 1, EP 2, DP 3
// (dense and expert data-parallel, ZeRO's gathers), PP 4 (pipeline messages),
// memory offload 5. A collective takes the stream of its group's effective axes
// (those of size above 1): several axes, or DP among them, are a data-parallel
// group (3); one axis is that axis's group, and its stream — so one
// communicator group is always on one stream, and its ranks issue its
// collectives in one order. Sends take their axis's stream; receives take no slot.
inline constexpr int kMemoryStream = 5;
int CommStreamOf(AxisSet effective);

// The generator writes the trace's own collective kinds (core/collective_kind.h).
using Coll = CollectiveKind;

// Ranks on the axes: rank = Σ coord[axis]·stride[axis], strides from the order
// (innermost first, Megatron's default tp-cp-ep-dp-pp).
class Layout {
 public:
  Layout() = default;
  Layout(std::array<int64_t, kNumAxes> sizes, std::array<Axis, kNumAxes> order);
  int64_t npus() const { return npus_; }
  int64_t size(Axis a) const { return sizes_[static_cast<int>(a)]; }
  int64_t Coord(int64_t rank, Axis a) const;
  // The rank whose coordinate on `a` is `coord_on_a` and equal elsewhere.
  int64_t With(int64_t rank, Axis a, int64_t coord_on_a) const;
  // The axes of `set` whose size is above 1 (the others add no rank).
  AxisSet Effective(AxisSet set) const;
  int64_t GroupSize(AxisSet set) const;
  // The ranks of `rank`'s group over `set`, in rank order.
  std::vector<int> GroupRanks(int64_t rank, AxisSet set) const;
  std::vector<int> GroupRanks(int64_t rank, Axis a) const { return GroupRanks(rank, Axes(a)); }
  // Group name (comm-group JSON key, the nodes' pg_name): ids 1, 2, ... first
  // over the single axes with size > 1 in order tp, cp, ep, dp, pp, then the
  // data-parallel sets kDenseDp and kExpertDp when they span two or more axes;
  // within a kind, groups by their other coordinates. "" for a group of one.
  std::string GroupName(int64_t rank, AxisSet set) const;
  std::string GroupName(int64_t rank, Axis a) const { return GroupName(rank, Axes(a)); }
  // Every group: name -> ranks.
  std::map<std::string, std::vector<int>> AllGroups() const;
  std::string OrderText() const;
  const std::array<Axis, kNumAxes>& order() const { return order_; }

 private:
  int64_t GroupIndex(int64_t rank, AxisSet set) const;  // index among the set's groups
  std::array<int64_t, kNumAxes> sizes_{1, 1, 1, 1, 1};
  std::array<int64_t, kNumAxes> strides_{1, 1, 1, 1, 1};
  std::array<Axis, kNumAxes> order_{Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};
  std::vector<std::pair<AxisSet, int64_t>> kinds_;  // group kinds and their first id
  int64_t npus_ = 1;
};

// The generator's name for core/node_kind.h's enum; it emits kComp, kColl,
// kSend, kRecv, kMemLoad and kMemStore.
using GenKind = NodeKind;

struct GenNode {
  GenKind kind = GenKind::kComp;
  std::string name;
  uint64_t num_ops = 0;      // COMP: floating-point operations
  uint64_t tensor_size = 0;  // COMP: bytes moved (roofline); MEM: bytes
  uint64_t duration_micros = 0;
  bool timed = false;         // COMP: its time is duration_micros (replayed), not derived from num_ops
  uint64_t output_bytes = 0;  // COMP: its output held in HBM until its consumers ran (0: tensor_size)
  // COMP: the kernel's fractions of the device's peak FLOP/s and HBM bandwidth
  // (gen/kernels.h); 1 = the bare roofline, and then no attribute is written.
  float compute_efficiency = 1, memory_efficiency = 1;
  Coll coll = Coll::kAllReduce;
  uint64_t bytes = 0;     // COLL / SEND / RECV
  Axis axis = Axis::kTp;  // SEND/RECV: the axis the peer differs on
  AxisSet group = 0;      // COLL: the axes its group spans
  int peer_offset = 0;    // SEND/RECV: peer coordinate = own + offset along `axis`
  uint64_t tag = 0;
  std::vector<uint32_t> deps;       // indices of earlier nodes
  std::vector<uint32_t> ctrl_deps;  // order only (no data): indices of earlier nodes, none of them in deps
};

using NodeRef = uint32_t;

class GraphBuilder {
 public:
  NodeRef Compute(std::string name, uint64_t num_ops, uint64_t tensor_bytes, std::vector<NodeRef> deps);
  // The same with the kernel's efficiencies (compute_efficiency, memory_efficiency attributes).
  NodeRef Compute(std::string name, uint64_t num_ops, uint64_t tensor_bytes, float compute_efficiency,
                  float memory_efficiency, std::vector<NodeRef> deps);
  // A COMP node of a given duration (the toy traces' replayed compute);
  // `output_bytes` (0: none) stay in HBM until its consumers ran.
  NodeRef Timed(std::string name, uint64_t duration_us, uint64_t output_bytes, std::vector<NodeRef> deps);
  NodeRef Collective(std::string name, Coll type, uint64_t bytes, AxisSet group, std::vector<NodeRef> deps);
  NodeRef Collective(std::string name, Coll type, uint64_t bytes, Axis group, std::vector<NodeRef> deps) {
    return Collective(std::move(name), type, bytes, Axes(group), std::move(deps));
  }
  NodeRef Send(std::string name, Axis axis, int peer_offset, uint64_t bytes, uint64_t tag, std::vector<NodeRef> deps);
  NodeRef Recv(std::string name, Axis axis, int peer_offset, uint64_t bytes, uint64_t tag, std::vector<NodeRef> deps);
  NodeRef MemLoad(std::string name, uint64_t bytes, std::vector<NodeRef> deps);
  NodeRef MemStore(std::string name, uint64_t bytes, std::vector<NodeRef> deps);
  // `node` starts only after `before` has finished, though it uses none of its data.
  void OrderAfter(NodeRef node, NodeRef before) { nodes_[node].ctrl_deps.push_back(before); }
  const std::vector<GenNode>& nodes() const { return nodes_; }

 private:
  NodeRef Add(GenNode n, std::vector<NodeRef> deps);
  std::vector<GenNode> nodes_;
};

// A generated workload: the distinct graphs (classes) and each rank's class.
struct Workload {
  Layout layout;
  std::vector<GraphBuilder> classes;
  std::vector<int> class_of_rank;
  // --comm-streams: per-group (true: each node on its GenNode::stream) or one
  // (false: every node on stream 0 and no comm_stream written, ASTRA-sim's single slot).
  bool comm_streams = true;
  // Spelled kGenerated: the process-group table as a last METADATA node in every
  // file (`orrery gen --pg-metadata`). Off by default: ASTRA-sim (518bd51)
  // aborts on a METADATA node in its statistics; it reads PREFIX.comm_groups.json.
  bool pg_metadata = false;
};

// Node `n`'s communication stream under `layout` (0 for compute and receives).
int NodeStream(const Layout& layout, const GenNode& n);

// The simulator's graph for `rank`; `groups` maps group names to the
// simulator's group indices (as the trace loader gets them).
Result<NpuGraph> ToNpuGraph(const Workload& w, int rank, const std::map<std::string, int>& groups);
// The point-to-point peers of `rank`'s sends and receives, in node order,
// without building its graph (rank classes check them for every rank).
void RankPeers(const Workload& w, int rank, std::vector<int>* peers);
// What WriteChakra writes besides the nodes. Both spell every attribute the
// same way, as Chakra's own tools do (is_cpu_op false on every node, num_ops,
// comm_type and comm_size int64, tensor_size uint64, comm_src, comm_dst and
// comm_tag int32; docs/generator.md, "Trace files"). kGenerated (`orrery gen`):
// each collective's pg_name, comm_stream (with Workload::comm_streams), with
// Workload::pg_metadata the process-group table as a last METADATA node
// "## process_group:init ##" as Chakra's converter writes it, and
// PREFIX.comm_groups.json (ASTRA-sim's format). kAstraSimExample (`orrery trace gen-dp` / `gen-coll`): none of
// these, so every collective spans all NPUs.
enum class ChakraSpelling { kGenerated, kAstraSimExample };
// Writes PREFIX.<rank>.et for every rank and, spelled kGenerated,
// PREFIX.comm_groups.json (always, for simplicity).
Status WriteChakra(const Workload& w, const std::string& prefix, ChakraSpelling spelling = ChakraSpelling::kGenerated);
std::string CommGroupJson(const Layout& layout);

}  // namespace orrery::gen
