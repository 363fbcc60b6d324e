// Plan: a collective on one rank becomes its chunks, each a list of phases
// (system/phase_spec.h). The request is checked against the configured
// algorithms, the network (or the communicator group) becomes logical
// dimensions, the bytes are cut into chunks by ASTRA-sim's rules, and each
// chunk gets one phase per logical dimension it crosses, in the order of the
// inter-dimension scheduling. A collective is planned on every rank, so the
// usual few dimensions live on the stack.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "system/collective_engine.h"
#include "system/themis.h"

namespace orrery {

namespace {

// ASTRA-sim's chunking (docs/parity.md, "Sizes that do not divide evenly"):
// chunk = floor(bytes / splits); except for all-gather a chunk is at least
// one byte per NPU of the whole network, and the collective then becomes
// splits chunks of that size; every chunk is a full chunk, ceil(bytes /
// chunk) of them (the last one is not cut to the remainder).
struct Chunking {
  uint64_t chunk = 0;  // bytes per chunk
  uint64_t bytes = 0;  // the bytes the chunks cover
};

Chunking ChunkingOf(ComType type, uint64_t bytes, uint64_t splits, uint64_t npus) {
  Chunking c{bytes / splits, bytes};
  if (bytes > 0 && type != ComType::kAllGather && npus > c.chunk) {
    c.chunk = npus;
    c.bytes = splits * c.chunk;
  }
  if (c.chunk == 0) c.chunk = bytes;  // an all-gather smaller than its splits: one chunk (ASTRA-sim never ends)
  return c;
}

// The configured algorithms can run a collective of this type.
Status CheckImplementations(ComType type, const std::vector<AlgoSpec>& impl, const SystemOptions& options) {
  for (const AlgoSpec& a : impl) {
    // Under localBWAware an all-reduce's reduce-scatter and all-gather phases
    // may run on a doubleBinaryTree dimension (as a tree all-reduce, see Phase).
    if (a.kind == AlgoKind::kDoubleBinaryTree && type != ComType::kAllReduce) {
      return Status::Invalid(std::string("system configuration: a ") + ComTypeName(type) +
                             " was issued but its implementation is \"doubleBinaryTree\", which implements "
                             "all-reduce only; valid here: ring, direct, halvingDoubling");
    }
    if (a.kind == AlgoKind::kInSwitch) {
      if (type == ComType::kAllToAll) {
        return Status::Invalid(
            "system configuration: an ALL_TO_ALL was issued but its implementation is \"inSwitch\"; "
            "in-switch collectives are all-reduce, reduce-scatter and all-gather");
      }
      if (!(options.in_switch_reduction_bw > 0) && type != ComType::kAllGather) {
        return Status::Invalid(
            "system configuration: \"inSwitch\" needs \"in-switch-reduction-bw\" (bytes per ns "
            "the switch combines)");
      }
    }
    if (a.kind == AlgoKind::kHalvingDoubling && type == ComType::kAllToAll) {
      return Status::Invalid(
          "system configuration: an ALL_TO_ALL was issued but \"all-to-all-implementation\" is "
          "\"halvingDoubling\", which has no all-to-all; valid: ring, direct");
    }
  }
  return Status::Ok();
}

// The algorithm of a flat ring over a communicator group: the first
// configured algorithm when it is direct (its window kept), else ring. Under
// ASTRA-sim's model a list of several algorithms is replaced by ring first
// (its CommunicatorGroup::get_collective_plan), so direct survives only as
// the single entry of a one-dimensional network's list or a one* variant.
AlgoSpec FlatGroupAlgo(const std::vector<AlgoSpec>& impl, bool hierarchical) {
  AlgoSpec flat = hierarchical || impl.size() == 1 ? impl[0] : AlgoSpec{};
  if (flat.kind == AlgoKind::kHalvingDoubling || flat.kind == AlgoKind::kDoubleBinaryTree) flat = AlgoSpec{};
  if (flat.kind != AlgoKind::kDirect) flat.kind = AlgoKind::kRing;
  flat.name = flat.kind == AlgoKind::kDirect ? "direct(flat group)" : "ring(flat group)";
  return flat;
}

// A plugin's graph must be well formed: peers among the members, children in
// range, dependency counts that match.
std::string CheckGraph(const CustomGraph& g, const CollectiveRequest& req) {
  std::vector<uint32_t> parents(g.size(), 0);
  for (size_t i = 0; i < g.size(); ++i) {
    const CustomOp& op = g[i];
    if ((op.kind == CustomOp::kSend || op.kind == CustomOp::kRecv) &&
        std::find(req.members.begin(), req.members.end(), op.peer) == req.members.end()) {
      return "op " + std::to_string(i) + " talks to rank " + std::to_string(op.peer) + ", not a member";
    }
    for (uint32_t c : op.children) {
      if (c >= g.size() || c == i)
        return "op " + std::to_string(i) + " has child " + std::to_string(c) + " out of range";
      parents[c]++;
    }
  }
  for (size_t i = 0; i < g.size(); ++i) {
    if (parents[i] != g[i].num_deps) {
      return "op " + std::to_string(i) + " has num_deps " + std::to_string(g[i].num_deps) + " but " +
             std::to_string(parents[i]) + " parent(s)";
    }
  }
  return "";
}

}  // namespace

// One Plan call: the request, its logical dimensions, and what planning has
// found so far (the algorithms used, a plugin's bad graph).
class CollectiveEngine::Planner {
 public:
  Planner(CollectiveEngine* engine, int rank, ComType type, const CommGroup* group, std::string* algorithm_used)
      : e_(*engine), rank_(rank), type_(type), group_(group), algorithm_used_(algorithm_used) {}
  Status SetDims(const std::vector<AlgoSpec>& impl, const std::vector<bool>& involved);
  Result<std::vector<std::vector<PhaseSpec>>> Chunks(uint64_t bytes);

 private:
  // A logical dimension: one per network dimension, or a single ring (a flat
  // communicator group, or every NPU for the one* algorithms).
  struct LogicalDim {
    int size;  // NPUs on it (1: the collective is not on it)
    const AlgoSpec* algo;
    int queue;    // the NPU queue its phases wait in
    int net_dim;  // -1: a flat ring over a communicator group
  };
  using DimOrder = boost::container::small_vector<int, 4>;

  bool Active(int i) const { return dims_[i].size > 1; }
  DimOrder InitialOrder() const;
  // Themis: the dimensions in order of their accumulated load (the first
  // phase carries the most data, so it goes where there is most room).
  DimOrder ThemisOrderOf(uint64_t chunk_bytes, std::vector<double>* load) const;
  std::vector<PhaseSpec> PhasesOfChunk(uint64_t chunk_bytes, const DimOrder& order, bool first);
  // The phase of type `ct` on logical dimension i; `remain`, the chunk's
  // running size, becomes the size after it.
  PhaseSpec Phase(ComType ct, int i, uint64_t* remain, bool first);
  // The plugin builds this rank's graph for the phase (a bad one is kept as
  // the plan's error).
  void BuildPluginGraph(ComType ct, PhaseSpec* ps);
  RingView RingOf(const LogicalDim& ld) const;

  CollectiveEngine& e_;
  const int rank_;
  const ComType type_;
  const CommGroup* group_;  // null: no communicator group
  std::string* algorithm_used_;
  // The algorithm of a partial dimension of a grid group: the configured
  // one, or ring where it cannot run on the group's members of the dimension
  // (halving-doubling and the double binary tree on a count that is not a
  // power of two; in-switch and custom graphs, made for the whole dimension).
  const AlgoSpec* PartialDimAlgo(const AlgoSpec& configured, int size, int d);
  // A grid group, not whole dimensions, run per dimension (SetDims): its
  // phases ring over the group's members along each dimension (RingOf).
  bool partial_grid_ = false;
  AlgoSpec flat_;  // the flat group's algorithm (dims_ points to it)
  // PartialDimAlgo's replacements (dims_ points to them: reserved for every
  // dimension before the first, so they never move).
  boost::container::small_vector<AlgoSpec, 4> partial_;
  boost::container::small_vector<LogicalDim, 4> dims_;
  std::string error_;
};

Result<std::vector<std::vector<PhaseSpec>>> CollectiveEngine::Plan(int rank, ComType type, uint64_t bytes,
                                                                   const std::vector<bool>& involved, int group,
                                                                   std::string* algorithm_used) {
  if (algorithm_used) algorithm_used->clear();
  // The configured algorithms, or ring on every dimension (not copied: a
  // collective is planned on every rank).
  const std::vector<AlgoSpec>& impl = options_.ImplFor(type).empty() ? default_impl_ : options_.ImplFor(type);
  ORRERY_RETURN_IF_ERROR(CheckImplementations(type, impl, options_));
  Planner planner(this, rank, type, group >= 0 ? &groups_[group] : nullptr, algorithm_used);
  ORRERY_RETURN_IF_ERROR(planner.SetDims(impl, involved));
  return planner.Chunks(bytes);
}

Status CollectiveEngine::Planner::SetDims(const std::vector<AlgoSpec>& impl, const std::vector<bool>& involved) {
  const Topology& t = *e_.topology_;
  // A flat ring: under ASTRA-sim's model every group smaller than the
  // network, under the hierarchical one a group that is neither whole
  // dimensions nor a grid it runs per dimension (PhasesPerDimension).
  const bool hierarchical = e_.options_.hierarchical_groups;
  // Under the hierarchical model a grid group that is not whole dimensions
  // runs per dimension over its members along each (system/comm_group.h),
  // except with the one* algorithms, which plan over every NPU.
  partial_grid_ = hierarchical && group_ && group_->per_dimension && !group_->aligned;
  if (group_ && (hierarchical ? !group_->per_dimension || (partial_grid_ && impl[0].one)
                              : static_cast<int>(group_->ranks.size()) < t.npus())) {
    flat_ = FlatGroupAlgo(impl, hierarchical);
    dims_.push_back(LogicalDim{static_cast<int>(group_->ranks.size()), &flat_, 0, -1});
    return Status::Ok();
  }
  if (impl[0].one) {
    dims_.push_back(LogicalDim{t.npus(), &impl[0], 0, 0});
    return Status::Ok();
  }
  partial_.reserve(static_cast<size_t>(t.num_dims()));
  for (int d = 0; d < t.num_dims(); ++d) {
    // A dimension the node does not name is involved.
    const bool in = group_ ? group_->dims[d] : (static_cast<size_t>(d) >= involved.size() || involved[d]);
    if (in && impl[d].kind == AlgoKind::kInSwitch && t.dims()[d].block != Block::kSwitch) {
      return Status::Invalid("system configuration: \"inSwitch\" on dimension " + std::to_string(d) + ", which is a " +
                             BlockName(t.dims()[d].block) + "; in-switch collectives need a Switch dimension");
    }
    const int size = !in ? 1 : partial_grid_ ? group_->grid.n[d] : t.dims()[d].npus;
    const AlgoSpec* algo = &impl[d];
    if (partial_grid_ && in && size < t.dims()[d].npus) algo = PartialDimAlgo(impl[d], size, d);
    dims_.push_back(LogicalDim{size, algo, d, d});
  }
  return Status::Ok();
}

Result<std::vector<std::vector<PhaseSpec>>> CollectiveEngine::Planner::Chunks(uint64_t bytes) {
  const Chunking c = ChunkingOf(type_, bytes, static_cast<uint64_t>(e_.options_.preferred_dataset_splits),
                                static_cast<uint64_t>(e_.topology_->npus()));
  std::vector<std::vector<PhaseSpec>> chunks;
  if (c.chunk > 0) chunks.reserve(std::min<uint64_t>(c.bytes / c.chunk + 1, 64));
  DimOrder order = InitialOrder();
  const bool themis = e_.options_.themis && type_ != ComType::kAllToAll && dims_.size() > 1;
  std::vector<double> load;  // themis only
  if (themis) load.assign(dims_.size(), 0.0);
  for (uint64_t left = c.bytes; left > 0;) {
    left -= std::min(c.chunk, left);
    if (themis) order = ThemisOrderOf(c.chunk, &load);
    std::vector<PhaseSpec> phases = PhasesOfChunk(c.chunk, order, chunks.empty());
    if (phases.empty()) break;
    chunks.push_back(std::move(phases));
  }
  if (!error_.empty()) return Status::Invalid(error_);
  return chunks;
}

// Ascending dimensions; all-gather descends.
CollectiveEngine::Planner::DimOrder CollectiveEngine::Planner::InitialOrder() const {
  DimOrder order(dims_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  if (type_ == ComType::kAllGather) std::reverse(order.begin(), order.end());
  return order;
}

CollectiveEngine::Planner::DimOrder CollectiveEngine::Planner::ThemisOrderOf(uint64_t chunk_bytes,
                                                                             std::vector<double>* load) const {
  std::vector<ThemisDim> td;
  std::vector<int> act;
  for (size_t i = 0; i < dims_.size(); ++i) {
    td.push_back(ThemisDim{dims_[i].size, e_.topology_->BytesPerNs(dims_[i].net_dim < 0 ? 0 : dims_[i].net_dim)});
    if (Active(static_cast<int>(i))) act.push_back(static_cast<int>(i));
  }
  const std::vector<int> o = ThemisOrder(td, act, static_cast<double>(chunk_bytes), load);
  DimOrder order(o.begin(), o.end());
  if (type_ == ComType::kAllGather) std::reverse(order.begin(), order.end());
  return order;
}

// One phase per active dimension, in `order`; a localBWAware all-reduce is a
// reduce-scatter along the order, an all-reduce on the last active dimension
// and an all-gather back in reverse order. `first`: the collective's first
// chunk (it names the algorithms used).
std::vector<PhaseSpec> CollectiveEngine::Planner::PhasesOfChunk(uint64_t chunk_bytes, const DimOrder& order,
                                                                bool first) {
  std::vector<PhaseSpec> phases = e_.store_.TakePhaseList();
  phases.reserve(2 * dims_.size());
  uint64_t remain = chunk_bytes;
  if (type_ != ComType::kAllReduce || !e_.options_.local_bw_aware) {
    for (int i : order) {
      if (Active(i)) phases.push_back(Phase(type_, i, &remain, first));
    }
    return phases;
  }
  int last_pos = -1;
  for (size_t k = 0; k < order.size(); ++k) {
    if (Active(order[k])) last_pos = static_cast<int>(k);
  }
  for (int k = 0; k < last_pos; ++k) {
    if (Active(order[k])) phases.push_back(Phase(ComType::kReduceScatter, order[k], &remain, first));
  }
  if (last_pos >= 0) phases.push_back(Phase(ComType::kAllReduce, order[last_pos], &remain, first));
  for (int k = last_pos - 1; k >= 0; --k) {
    if (Active(order[k])) phases.push_back(Phase(ComType::kAllGather, order[k], &remain, first));
  }
  return phases;
}

PhaseSpec CollectiveEngine::Planner::Phase(ComType ct, int i, uint64_t* remain, bool first) {
  PhaseSpec ps;
  ps.type = ct;
  ps.queue_id = dims_[i].queue;
  ps.size = *remain;
  ps.algo = *dims_[i].algo;
  ps.ring = RingOf(dims_[i]);
  if (ps.algo.kind == AlgoKind::kPlugin) BuildPluginGraph(ct, &ps);
  const uint64_t p = static_cast<uint64_t>(ps.ring.size);
  if (ps.algo.kind == AlgoKind::kDoubleBinaryTree) {
    // A tree phase is an all-reduce of its whole input whatever the phase
    // (localBWAware's reduce-scatter/all-gather too): the size is kept.
    // Each dimension alternates its own two trees.
    const int slot = rank_ * std::max(1, e_.topology_->num_dims()) + std::max(0, dims_[i].net_dim);
    ps.dbt_root_max = (e_.dbt_phases_[slot]++ % 2) == 0;
    ps.type = ComType::kAllReduce;
  } else if (ct == ComType::kAllGather) {
    *remain = *remain * p;
  } else if (ct == ComType::kReduceScatter) {
    *remain = *remain / p;
  }
  ps.final_size = *remain;
  if (first && algorithm_used_) {
    if (!algorithm_used_->empty()) algorithm_used_->push_back(',');
    algorithm_used_->append(ComTypeName(ct)).append(":").append(ps.algo.name);
  }
  return ps;
}

void CollectiveEngine::Planner::BuildPluginGraph(ComType ct, PhaseSpec* ps) {
  CollectiveRequest req{ct, {}, rank_, ps->size};
  for (int k = 0; k < ps->ring.size; ++k) req.members.push_back(ps->ring.Member(k));
  auto graph = std::make_shared<CustomGraph>(ps->algo.plugin->build(req));
  const std::string bad = CheckGraph(*graph, req);
  if (!bad.empty() && error_.empty()) {
    error_ = "collective algorithm \"" + ps->algo.name + "\" returned an invalid graph for rank " +
             std::to_string(rank_) + " (" + ComTypeName(ct) + "): " + bad;
  }
  ps->algo.graph = std::move(graph);
  ps->algo.kind = AlgoKind::kCustom;
}

const AlgoSpec* CollectiveEngine::Planner::PartialDimAlgo(const AlgoSpec& configured, int size, int d) {
  const bool pow2 = (size & (size - 1)) == 0;
  const AlgoKind k = configured.kind;
  const bool keep = k == AlgoKind::kRing || k == AlgoKind::kDirect || k == AlgoKind::kPlugin ||
                    ((k == AlgoKind::kHalvingDoubling || k == AlgoKind::kDoubleBinaryTree) && pow2);
  if (keep) return &configured;
  AlgoSpec& ring = partial_.emplace_back();
  ring.kind = AlgoKind::kRing;
  ring.name = "ring(group on dim " + std::to_string(d) + ")";
  return &ring;
}

RingView CollectiveEngine::Planner::RingOf(const LogicalDim& ld) const {
  if (ld.net_dim >= 0 && partial_grid_) {
    // The group's members along the dimension: lo + j·step (a regular slice).
    const Topology& t = *e_.topology_;
    const int d = ld.net_dim;
    RingView v;
    v.size = group_->grid.n[d];
    v.index = (t.Coord(rank_, d) - group_->grid.lo[d]) / group_->grid.step[d];
    v.offset = group_->grid.step[d] * t.stride(d);
    v.base = rank_ - v.index * v.offset;
    return v;
  }
  if (ld.net_dim >= 0) return e_.DimRing(rank_, ld.net_dim, *ld.algo);
  RingView v;
  v.members = &group_->ranks;
  v.size = static_cast<int>(group_->ranks.size());
  v.index = static_cast<int>(std::lower_bound(group_->ranks.begin(), group_->ranks.end(), rank_) -
                             group_->ranks.begin());
  return v;
}

RingView CollectiveEngine::DimRing(int rank, int dim, const AlgoSpec& algo) const {
  RingView v;
  if (algo.one) {
    v.size = topology_->npus();
    v.index = rank;
    v.base = 0;
    v.offset = 1;
    return v;
  }
  const int stride = topology_->stride(dim);
  v.size = topology_->dims()[dim].npus;
  v.index = topology_->Coord(rank, dim);
  v.offset = stride;
  v.base = rank - v.index * stride;
  return v;
}

}  // namespace orrery
