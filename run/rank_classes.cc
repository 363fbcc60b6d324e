#include "run/rank_classes.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "run/rank_class_decider.h"
#include "run/symmetry.h"
#include "system/comm_group.h"
#include "workload/engine_collective.h"

namespace orrery {

// A network offset: the per-dimension coordinate difference (b - a, wrapped),
// written as the rank id it would have. Every dimension wraps (no Mesh here),
// so the analytical delay from a to b depends on this offset only.
int Offset(const Topology& t, int a, int b) {
  int off = 0;
  for (int d = 0; d < t.num_dims(); ++d) {
    const int n = t.dims()[d].npus;
    off += ((t.Coord(b, d) - t.Coord(a, d)) % n + n) % n * t.stride(d);
  }
  return off;
}

int Shift(const Topology& t, int a, int off, int sign) {
  int r = 0;
  for (int d = 0; d < t.num_dims(); ++d) {
    const int n = t.dims()[d].npus;
    r += ((t.Coord(a, d) + sign * t.Coord(off, d)) % n + n) % n * t.stride(d);
  }
  return r;
}

namespace {

// The network distance from a to b as the analytical backend sees it: the
// hop count per dimension (Topology::Hops), written like an offset. Delays and
// per-dimension counters of a message depend on this only, so two ranks whose
// peers are at equal distances see the same network: on a Switch any other
// member is 2 hops away, whichever direction (a context-parallel pair's peer
// at +s or -s); on a Ring d and n - d are equal.
int64_t Distance(const Topology& t, int a, int b) {
  int64_t out = 0;
  for (int d = 0; d < t.num_dims(); ++d) out = out * (t.dims()[d].npus + 2) + t.Hops(d, t.Coord(a, d), t.Coord(b, d));
  return out;
}
// `hierarchical`: the group-collective model; under ASTRA-sim's a group of
// several whole dimensions that is not the network runs as a flat ring too,
// under the hierarchical one a grid over several dimensions runs per
// dimension (PhasesPerDimension): every member then runs the same phases over
// members at equal distances, so the group is uniform, keyed by its count on
// each dimension.
std::vector<GroupShape> Shapes(const Topology& t, const std::vector<std::vector<int>>& groups, bool hierarchical) {
  std::vector<GroupShape> out(groups.size());
  std::map<std::vector<int64_t>, int> keys;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int>& ranks = groups[g];
    const GroupGrid grid = GridOf(t, ranks);
    uint32_t varies = 0;
    int dim = 0;  // the last dimension it varies in
    for (int d = 0; d < t.num_dims(); ++d) {
      if (grid.n[d] > 1) varies |= 1u << d, dim = d;
    }
    const bool aligned = grid.aligned;  // sorted, distinct: whole dimensions
    const bool flat_ok = grid.varying == 1 &&
                         (t.dims()[dim].block == Block::kSwitch || t.dims()[dim].block == Block::kFullyConnected);
    const bool flat_aligned = aligned && !hierarchical && grid.varying > 1 &&
                              ranks.size() < static_cast<size_t>(t.npus());
    const bool grid_phases = hierarchical && !aligned && PhasesPerDimension(t, grid);
    out[g].uniform = (aligned && !flat_aligned) || grid_phases || flat_ok || ranks.size() <= 1;
    out[g].flat = (!aligned || flat_aligned) && !grid_phases && ranks.size() > 1;
    std::vector<int64_t> key{static_cast<int64_t>(ranks.size()), varies, aligned, grid_phases};
    if (grid_phases) key.insert(key.end(), grid.n.begin(), grid.n.end());
    out[g].key = keys.emplace(std::move(key), static_cast<int>(keys.size())).first->second;
  }
  return out;
}

std::string ConfigReason(const ClassInputs& in) {
  const Spec& c = *in.spec;
  if (c.run.backend != "analytical") return "backend " + c.run.backend + " is not symmetric (only analytical is)";
  const RemoteMemoryKind mem = c.remote_memory.kind;
  if (mem == RemoteMemoryKind::kPool || mem == RemoteMemoryKind::kPerNode || !c.files.memory_config.empty()) {
    return "remote memory is shared between ranks";
  }
  for (const Dim& d : in.topology->dims()) {
    if (d.block == Block::kMesh) return "a Mesh dimension (its hop counts depend on the position)";
  }
  // NPUs at their own compute speed split their classes (ClassDecider::SplitBySpeed); a
  // link at its own bandwidth would make positions that look equivalent differ.
  if (!c.heterogeneity.link.empty()) return "--heterogeneity gives NPU links their own bandwidth";
  return "";
}

// Peer ranks as network offsets, groups by shape: two ranks in the same
// position of equal workloads give equal graphs.
void Normalize(NpuGraph* g, const Topology& t, const std::vector<GroupShape>& shapes) {
  for (WorkNode& n : g->nodes) {
    if (n.kind == NodeKind::kSend) n.comm_dst = Offset(t, g->rank, n.comm_dst);
    if (n.kind == NodeKind::kRecv) n.comm_src = Offset(t, g->rank, n.comm_src);
    if (n.group >= 0) n.group = shapes[n.group].key;
  }
}

// One point-to-point peer of a class's graphs, relative to the rank.
struct Peer {
  int offset = 0;  // the network offset (Offset)
};

// The distinct peers of a normalized graph (peers are offsets) in node order.
std::vector<Peer> PeersOf(const NpuGraph& g) {
  std::vector<Peer> out;
  for (const WorkNode& n : g.nodes) {
    if (n.kind != NodeKind::kSend && n.kind != NodeKind::kRecv) continue;
    const Peer peer{n.kind == NodeKind::kSend ? n.comm_dst : n.comm_src};
    if (std::none_of(out.begin(), out.end(), [&](const Peer& x) { return x.offset == peer.offset; })) {
      out.push_back(peer);
    }
  }
  return out;
}

}  // namespace

// Why a rank's graph rules classes out; "" when it does not. `flat_rings`:
// a collective on a group that is not uniform is allowed when the engine runs
// it as a flat ring (each member's ring neighbours are then among its peers,
// so the classes split by their distances and may span the group).
std::string GraphReason(const NpuGraph& g, const SystemOptions& so, const std::vector<GroupShape>& shapes,
                        bool flat_rings) {
  for (const WorkNode& n : g.nodes) {
    const std::string at = "rank " + std::to_string(g.rank) + "'s node " + std::to_string(n.id);
    if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && !n.local_tier) {
      return at + " accesses remote memory (its statistics are not kept per class)";
    }
    if (n.kind != NodeKind::kColl) continue;
    if (IsRooted(n.collective)) {
      return at + " is a " + std::string(CollectiveName(n.collective)) + " (rooted collectives differ per rank)";
    }
    const std::vector<AlgoSpec>& list = so.ImplFor(*ToComType(n.collective));
    if (!AlgorithmsSymmetric(list)) return "an algorithm in use (double binary tree, custom or one*) differs per rank";
    const bool flat_ring = flat_rings && n.group >= 0 && shapes[n.group].flat &&
                           (list.empty() || list[0].kind != AlgoKind::kDirect);  // empty: ring
    if (n.group >= 0 && !shapes[n.group].uniform && !flat_ring) {
      return at +
             "'s communicator group is neither whole dimensions nor one Switch/FullyConnected dimension "
             "(its members' network paths differ)";
    }
  }
  return "";
}

ClassDecider::ClassDecider(const ClassInputs& in)
    : in_(in),
      t_(*in.topology),
      npus_(in.topology->npus()),
      shapes_(Shapes(*in.topology, *in.groups, in.spec && in.spec->options.hierarchical_groups)),
      declared_(in.source->DeclaredClasses()),
      peer_begin_(npus_ + 1, 0),
      group_used_(in.groups->size(), 0),
      kind_of_group_(in.groups->size(), 0) {
  std::vector<int> probe;
  if (declared_ && !in.source->RankPeers(0, &probe)) declared_ = nullptr;
}

Result<ClassDecision> ClassDecider::Decide() {
  d_.note = ConfigReason(in_);
  if (Stopped()) return std::move(d_);
  ORRERY_RETURN_IF_ERROR(declared_ ? ClassesFromGenerator() : ClassesFromTraces());
  if (Stopped()) return std::move(d_);
  SplitBySpeed();
  Refine();
  if (Stopped()) return std::move(d_);
  ORRERY_RETURN_IF_ERROR(PickRepresentatives());
  for (void (ClassDecider::*check)() : {&ClassDecider::CheckGroups, &ClassDecider::CheckGroupPositions,
                                        &ClassDecider::CheckGeneratorGroups, &ClassDecider::CheckCrossClassMessages,
                                        &ClassDecider::CheckAllNpuCollectives, &ClassDecider::FindMirrorSenders}) {
    if (Stopped()) return std::move(d_);
    (this->*check)();
  }
  if (Stopped()) return std::move(d_);
  std::sort(d_.rep_graphs.begin(), d_.rep_graphs.end(),
            [](const NpuGraph& a, const NpuGraph& b) { return a.rank < b.rank; });
  d_.use = true;
  d_.note = Summary();
  return std::move(d_);
}

// The same words whichever source found the classes (a generated workload
// and its written traces give identical reports).
std::string ClassDecider::Summary() const {
  const int by_speed = static_cast<int>(speed_classes_ - graph_classes_);
  const int split = classes_ - static_cast<int>(speed_classes_);
  return std::to_string(classes_) + " rank class" + (classes_ == 1 ? "" : "es") +
         " (ranks whose graphs are equal up to node ids, peer offsets and groups, on equivalent network "
         "positions" +
         (by_speed > 0 ? "; " + std::to_string(by_speed) + " split off by their --heterogeneity compute speed" : "") +
         (split > 0 ? "; " + std::to_string(split) + " split off by the classes of their peers" : "") +
         "): one representative each simulated for all " + std::to_string(npus_) + " ranks";
}

// The generator's classes, split by the network distance of each rank's
// peers (node by node, then its flat rings' neighbours) and by which of them
// are the same rank: ranks of one class then have equal graphs up to
// renaming, and every message of theirs the same delay.
Status ClassDecider::ClassesFromGenerator() {
  AssignGroupKinds();
  auto flat_kinds = FlatKindsOfDeclaredClasses();
  if (!flat_kinds.ok()) return flat_kinds.status();
  ClassifyByPeers(flat_kinds.value(), FlatGroupsOfRanks());
  return Status::Ok();
}

// Groups of one kind: the same member offsets from their first member.
void ClassDecider::AssignGroupKinds() {
  std::map<std::vector<int>, int> ids;
  std::vector<int> offs;
  for (size_t g = 0; g < in_.groups->size(); ++g) {
    const std::vector<int>& ranks = (*in_.groups)[g];
    offs.clear();
    for (int r : ranks) offs.push_back(Offset(t_, ranks.empty() ? 0 : ranks[0], r));
    kind_of_group_[g] = ids.emplace(offs, static_cast<int>(ids.size())).first->second;
  }
}

// Per rank: its non-uniform flat groups.
std::vector<std::vector<int>> ClassDecider::FlatGroupsOfRanks() const {
  std::vector<std::vector<int>> flat_groups_of(npus_);
  for (size_t g = 0; g < in_.groups->size(); ++g) {
    if (shapes_[g].uniform || !shapes_[g].flat) continue;
    for (int r : (*in_.groups)[g]) flat_groups_of[r].push_back(static_cast<int>(g));
  }
  return flat_groups_of;
}

// Per declared class: the kinds of non-uniform groups its collectives run a
// flat ring on, read from its first member's graph (kept for the representatives).
Result<std::vector<std::vector<int>>> ClassDecider::FlatKindsOfDeclaredClasses() {
  bool any_flat = false;
  for (size_t g = 0; g < in_.groups->size(); ++g) any_flat |= !shapes_[g].uniform && shapes_[g].flat;
  int num_declared = 0;
  for (int c : *declared_) num_declared = std::max(num_declared, c + 1);
  std::vector<std::vector<int>> flat_kinds(num_declared);
  std::vector<uint8_t> seen(num_declared, 0);
  for (int r = 0; r < npus_ && any_flat; ++r) {
    const int c = (*declared_)[r];
    if (seen[c]) continue;
    seen[c] = 1;
    auto g = in_.load(r);
    if (!g.ok()) return g.status();
    for (const WorkNode& n : g->nodes) {
      if (n.kind != NodeKind::kColl || n.group < 0 || shapes_[n.group].uniform || !shapes_[n.group].flat) continue;
      if (std::find(flat_kinds[c].begin(), flat_kinds[c].end(), kind_of_group_[n.group]) == flat_kinds[c].end()) {
        flat_kinds[c].push_back(kind_of_group_[n.group]);
      }
    }
    std::sort(flat_kinds[c].begin(), flat_kinds[c].end());
    loaded_.emplace(r, std::move(g.value()));
  }
  return flat_kinds;
}

namespace {

// One rank's peers in the order met, and its key: per peer met (repeats
// included) the distance and which distinct peer it is.
struct PeerKey {
  std::vector<int64_t> key;
  std::vector<int> peers;
  std::vector<int64_t> distance;

  void Clear() {
    key.clear();
    peers.clear();
    distance.clear();
  }
  void Add(const Topology& t, int r, int p) {
    size_t i = 0;
    while (i < peers.size() && peers[i] != p) ++i;
    if (i == peers.size()) {
      peers.push_back(p);
      distance.push_back(Distance(t, r, p));
    }
    key.push_back(distance[i]);
    key.push_back(static_cast<int64_t>(i));
  }
};

}  // namespace

// Each rank's class: its declared class and its PeerKey; its peers into peer_of_.
void ClassDecider::ClassifyByPeers(const std::vector<std::vector<int>>& flat_kinds,
                                   const std::vector<std::vector<int>>& flat_groups_of) {
  std::map<std::pair<int, std::vector<int64_t>>, int32_t> ids_by_key;
  std::vector<int> probe;
  PeerKey k;
  graph_class_.resize(npus_);
  for (int r = 0; r < npus_; ++r) {
    in_.source->RankPeers(r, &probe);
    k.Clear();
    for (int p : probe) k.Add(t_, r, p);
    for (int kind : flat_kinds.empty() ? std::vector<int>{} : flat_kinds[(*declared_)[r]]) {
      for (int g : flat_groups_of[r]) {
        if (kind_of_group_[g] != kind) continue;
        const std::vector<int>& ranks = (*in_.groups)[g];
        const size_t i = std::lower_bound(ranks.begin(), ranks.end(), r) - ranks.begin();
        k.Add(t_, r, ranks[(i + ranks.size() - 1) % ranks.size()]);
        k.Add(t_, r, ranks[(i + 1) % ranks.size()]);
      }
    }
    graph_class_[r] = ids_by_key
                          .emplace(std::make_pair((*declared_)[r], k.key), static_cast<int32_t>(ids_by_key.size()))
                          .first->second;
    peer_of_.insert(peer_of_.end(), k.peers.begin(), k.peers.end());
    peer_begin_[r + 1] = static_cast<uint32_t>(peer_of_.size());
  }
  graph_classes_ = ids_by_key.size();
}

// Ranks of one class compute at one speed: a class whose members the
// heterogeneity file gives different speeds splits by speed (Refine then
// splits the classes of their peers, and a collective that spans the pieces
// rules classes out, with its reason).
void ClassDecider::SplitBySpeed() {
  speed_classes_ = graph_classes_;
  const Heterogeneity& h = in_.spec->heterogeneity;
  if (h.compute_speed.empty()) return;
  std::map<std::pair<int32_t, double>, int32_t> ids;
  for (int r = 0; r < npus_; ++r) {
    const auto key = std::make_pair(graph_class_[r], h.ComputeSpeed(r));
    graph_class_[r] = ids.emplace(key, static_cast<int32_t>(ids.size())).first->second;
  }
  speed_classes_ = ids.size();
}

// Classes of trace files: every rank's graph compared (hash, then node by
// node) with the first rank of each class so far; each rank's peers are its
// class's, shifted to it.
Status ClassDecider::ClassesFromTraces() {
  std::vector<NpuGraph> heads;
  std::vector<std::vector<Peer>> class_peers;
  std::unordered_map<uint64_t, std::vector<int>> by_hash;
  graph_class_.assign(npus_, -1);
  for (int r = 0; r < npus_; ++r) {
    auto g = in_.load(r);
    if (!g.ok()) return g.status();
    d_.note = GraphReason(g.value(), in_.spec->options, shapes_, false);
    if (Stopped()) return Status::Ok();
    uint32_t position = 0;  // among the rank's collectives, in node order
    for (const WorkNode& n : g->nodes) {
      if (n.kind != NodeKind::kColl) continue;
      if (n.group >= 0) {
        const std::vector<int>& members = (*in_.groups)[n.group];
        if (!std::binary_search(members.begin(), members.end(), r)) {
          // The full engine refuses it, naming the node (Executor's diagnostics).
          d_.note = "rank " + std::to_string(r) + " runs a collective on communicator group " +
                    std::to_string(n.group) + " but is not a member of it";
          return Status::Ok();
        }
        group_used_[n.group] = 1;
        ++group_uses_[static_cast<uint64_t>(position) << 32 | static_cast<uint32_t>(n.group)];
      }
      ++position;
    }
    Normalize(&g.value(), t_, shapes_);
    const uint64_t h = GraphShapeHash(g.value());
    std::vector<int>& bucket = by_hash[h];
    for (int c : bucket) {
      if (GraphDifference(heads[c], g.value()).empty()) {
        graph_class_[r] = c;
        break;
      }
    }
    if (graph_class_[r] >= 0) continue;
    if (heads.size() + 1 > static_cast<size_t>(npus_) / 2) {
      // Classes would save less than half the work, and their first graphs
      // would cost as much memory as the full run's: stop reading.
      d_.note = "more than half the ranks differ from every other (" + std::to_string(heads.size() + 1) +
                " distinct graphs up to rank " + std::to_string(r) + ")";
      return Status::Ok();
    }
    graph_class_[r] = static_cast<int32_t>(heads.size());
    bucket.push_back(static_cast<int>(heads.size()));
    class_peers.push_back(PeersOf(g.value()));
    heads.push_back(std::move(g.value()));
  }
  graph_classes_ = class_peers.size();
  for (int r = 0; r < npus_; ++r) {
    for (const Peer& p : class_peers[graph_class_[r]]) peer_of_.push_back(Shift(t_, r, p.offset, +1));
    peer_begin_[r + 1] = static_cast<uint32_t>(peer_of_.size());
  }
  return Status::Ok();
}

Result<ClassDecision> DecideRankClasses(const ClassInputs& in) { return ClassDecider(in).Decide(); }

Result<ClassDecision> DecideRankClassesForRun(const Spec& spec, const Topology& topology, GraphLoadOptions lo) {
  std::map<std::string, std::vector<int>> named = spec.comm_groups;
  std::map<std::string, int> index;
  std::vector<std::vector<int>> groups;
  for (auto& [name, ranks] : named) {
    index[name] = static_cast<int>(groups.size());
    std::sort(ranks.begin(), ranks.end());
    groups.push_back(ranks);
  }
  lo.groups = &index;
  ClassInputs in;
  in.spec = &spec;
  in.topology = &topology;
  in.source = spec.source.get();
  in.groups = &groups;
  in.load = [&](int r) { return spec.source->Load(r, lo); };
  return DecideRankClasses(in);
}

}  // namespace orrery
