#include "workload/rank_classes.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>

#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "workload/symmetry.h"

namespace orrery {

namespace {

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

// A communicator group's shape: its size and the dimensions its members vary
// in. Uniform when every member sees the same network: the group is whole
// dimensions (the engine runs it per dimension), or its members vary in one
// Switch or FullyConnected dimension only (a flat ring or direct exchange
// whose every pair of members is the same distance apart).
struct GroupShape {
  int key = 0;
  bool uniform = false;
};

std::vector<GroupShape> Shapes(const Topology& t, const std::vector<std::vector<int>>& groups) {
  std::vector<GroupShape> out(groups.size());
  std::map<std::tuple<size_t, uint32_t, bool>, int> keys;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int>& ranks = groups[g];
    uint32_t varies = 0;
    size_t expect = 1;
    for (int d = 0; d < t.num_dims() && !ranks.empty(); ++d) {
      for (int r : ranks) {
        if (t.Coord(r, d) != t.Coord(ranks[0], d)) {
          varies |= 1u << d;
          expect *= t.dims()[d].npus;
          break;
        }
      }
    }
    const bool aligned = !ranks.empty() && expect == ranks.size();  // sorted, distinct: whole dimensions
    int vary_dims = 0, dim = 0;
    for (int d = 0; d < t.num_dims(); ++d) {
      if (varies & (1u << d)) ++vary_dims, dim = d;
    }
    const bool flat_ok = vary_dims == 1 && (t.dims()[dim].block == Block::kSwitch ||
                                            t.dims()[dim].block == Block::kFullyConnected);
    out[g].uniform = aligned || flat_ok || ranks.size() <= 1;
    out[g].key = keys.emplace(std::make_tuple(ranks.size(), varies, aligned), static_cast<int>(keys.size())).first->second;
  }
  return out;
}

std::string ConfigReason(const ClassInputs& in) {
  const RunConfig& c = *in.config;
  if (c.backend != "analytical") return "backend " + c.backend + " is not symmetric (only analytical is)";
  if (in.mem == RemoteMemoryKind::kPool || in.mem == RemoteMemoryKind::kPerNode || !c.memory_config_path.empty()) {
    return "remote memory is shared between ranks";
  }
  for (const Dim& d : in.topology->dims()) {
    if (d.block == Block::kMesh) return "a Mesh dimension (its hop counts depend on the position)";
  }
  if (c.critical_path) return "--critical-path records every rank";
  if (!c.timeline_path.empty()) return "--timeline draws every rank";
  return "";
}

// Why a rank's graph rules classes out; "" when it does not.
std::string GraphReason(const NpuGraph& g, const SystemOptions& so, const std::vector<GroupShape>& shapes) {
  for (const WorkNode& n : g.nodes) {
    const std::string at = "rank " + std::to_string(g.rank) + "'s node " + std::to_string(n.id);
    if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && !n.local_tier) {
      return at + " accesses remote memory (its statistics are not kept per class)";
    }
    if (n.kind != NodeKind::kColl) continue;
    const std::vector<AlgoSpec>* list = nullptr;
    switch (n.comm_type) {
      case 0: list = &so.all_reduce; break;
      case 2: list = &so.all_gather; break;
      case 6: list = &so.all_to_all; break;
      case 7:
      case 8: list = &so.reduce_scatter; break;
      default: return at + " is a " + std::string(CollectiveName(n.comm_type)) + " (rooted collectives differ per rank)";
    }
    if (!AlgorithmsSymmetric(*list)) return "an algorithm in use (double binary tree, custom or one*) differs per rank";
    if (n.group >= 0 && !shapes[n.group].uniform) {
      return at + "'s communicator group is neither whole dimensions nor one Switch/FullyConnected dimension "
             "(its members' network paths differ)";
    }
  }
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

// Classes of trace files: every rank's graph compared (hash, then node by
// node) with the first rank of each class so far.
Status ClassesFromGraphs(const ClassInputs& in, const std::vector<GroupShape>& shapes, std::vector<int32_t>* class_of,
                         std::string* reason) {
  const Topology& t = *in.topology;
  std::vector<NpuGraph> heads;
  std::unordered_map<uint64_t, std::vector<int>> by_hash;
  class_of->assign(t.npus(), -1);
  for (int r = 0; r < t.npus(); ++r) {
    auto g = in.load(r);
    if (!g.ok()) return g.status();
    *reason = GraphReason(g.value(), *in.so, shapes);
    if (!reason->empty()) return Status::Ok();
    Normalize(&g.value(), t, shapes);
    const uint64_t h = GraphShapeHash(g.value());
    std::vector<int>& bucket = by_hash[h];
    for (int c : bucket) {
      if (GraphDifference(heads[c], g.value()).empty()) {
        (*class_of)[r] = c;
        break;
      }
    }
    if ((*class_of)[r] >= 0) continue;
    (*class_of)[r] = static_cast<int32_t>(heads.size());
    bucket.push_back(static_cast<int>(heads.size()));
    heads.push_back(std::move(g.value()));
  }
  return Status::Ok();
}

}  // namespace

Result<ClassDecision> DecideRankClasses(const ClassInputs& in) {
  ClassDecision d;
  const Topology& t = *in.topology;
  const int npus = t.npus();
  d.note = ConfigReason(in);
  if (!d.note.empty()) return d;
  const std::vector<GroupShape> shapes = Shapes(t, *in.groups);
  RankClassMap& m = d.map;
  const std::vector<int>* declared = in.source->DeclaredClasses();
  if (declared) {
    m.class_of.assign(declared->begin(), declared->end());
  } else if (Status st = ClassesFromGraphs(in, shapes, &m.class_of, &d.note); !st.ok()) {
    return st;
  } else if (!d.note.empty()) {
    return d;
  }
  int classes = 0;
  for (int c : m.class_of) classes = std::max(classes, c + 1);
  if (classes >= npus) {
    d.note = "every rank is a class of its own";
    return d;
  }
  m.rep.assign(classes, -1);
  m.size.assign(classes, 0);
  for (int c : m.class_of) m.size[c]++;

  // Representatives: from rank 0, follow each representative's messages to
  // other classes; the peer becomes its class's representative, so every
  // message between classes is one between simulated ranks.
  struct Peer {
    int rank_delta, offset;
    bool same_class;
  };
  std::vector<std::vector<Peer>> peers(classes);
  std::vector<uint8_t> shape_used(shapes.size(), 0);
  std::vector<uint32_t> slab_masks;  // involved dimensions of collectives on all NPUs
  std::deque<int> queue;
  for (int seed = 0; seed < npus; ++seed) {
    if (m.rep[m.class_of[seed]] >= 0) continue;
    m.rep[m.class_of[seed]] = seed;
    queue.push_back(seed);
    while (!queue.empty()) {
      const int rep = queue.front();
      queue.pop_front();
      auto g = in.load(rep);
      if (!g.ok()) return g.status();
      d.note = GraphReason(g.value(), *in.so, shapes);
      if (!d.note.empty()) return d;
      const int c = m.class_of[rep];
      for (const WorkNode& n : g->nodes) {
        if (n.kind == NodeKind::kColl) {
          if (n.group >= 0) {
            shape_used[shapes[n.group].key] = 1;
            for (int member : (*in.groups)[n.group]) {
              if (m.class_of[member] != c) {
                d.note = "rank " + std::to_string(rep) + "'s node " + std::to_string(n.id) + " is a collective whose "
                         "group spans rank classes " + std::to_string(c) + " and " + std::to_string(m.class_of[member]) +
                         " (rank " + std::to_string(member) + ")";
                return d;
              }
            }
          } else {
            uint32_t mask = 0;
            for (int k = 0; k < t.num_dims(); ++k) {
              if (n.involved < 0 || k >= static_cast<int>(g->involved[n.involved].size()) ||
                  g->involved[n.involved][k]) {
                mask |= 1u << k;
              }
            }
            if (std::find(slab_masks.begin(), slab_masks.end(), mask) == slab_masks.end()) slab_masks.push_back(mask);
          }
          continue;
        }
        if (n.kind != NodeKind::kSend && n.kind != NodeKind::kRecv) continue;
        const int p = n.kind == NodeKind::kSend ? n.comm_dst : n.comm_src;
        const Peer peer{p - rep, Offset(t, rep, p), m.class_of[p] == c};
        auto& list = peers[c];
        if (std::none_of(list.begin(), list.end(), [&](const Peer& x) { return x.rank_delta == peer.rank_delta; })) {
          list.push_back(peer);
        }
        if (peer.same_class) continue;
        int& other = m.rep[m.class_of[p]];
        if (other < 0) {
          other = p;
          queue.push_back(p);
        } else if (other != p) {
          d.note = "rank " + std::to_string(rep) + " (representing class " + std::to_string(c) + ") exchanges messages "
                   "with rank " + std::to_string(p) + ", but rank " + std::to_string(other) + " represents its class";
          return d;
        }
      }
      d.rep_graphs.push_back(std::move(g.value()));
    }
  }
  // Groups of the shapes the representatives use lie inside one class each
  // (every member's group has its representative's shape).
  for (size_t g = 0; g < in.groups->size(); ++g) {
    if (!shape_used[shapes[g].key]) continue;
    const std::vector<int>& ranks = (*in.groups)[g];
    for (int r : ranks) {
      if (m.class_of[r] != m.class_of[ranks[0]]) {
        d.note = "communicator group " + std::to_string(g) + " spans rank classes " +
                 std::to_string(m.class_of[ranks[0]]) + " (rank " + std::to_string(ranks[0]) + ") and " +
                 std::to_string(m.class_of[r]) + " (rank " + std::to_string(r) + ")";
        return d;
      }
    }
  }
  // A collective on all NPUs (or on whole dimensions of every rank): the
  // neighbours along each dimension it spans are in one class.
  for (uint32_t mask : slab_masks) {
    for (int k = 0; k < t.num_dims(); ++k) {
      if (!(mask & (1u << k)) || t.dims()[k].npus < 2) continue;
      for (int r = 0; r < npus; ++r) {
        const int next = t.WithCoord(r, k, (t.Coord(r, k) + 1) % t.dims()[k].npus);
        if (m.class_of[r] != m.class_of[next]) {
          d.note = "a collective on all NPUs spans rank classes " + std::to_string(m.class_of[r]) + " (rank " +
                   std::to_string(r) + ") and " + std::to_string(m.class_of[next]) + " (rank " + std::to_string(next) + ")";
          return d;
        }
      }
    }
  }
  // Network position: every member's peers sit at its representative's
  // peers' offsets and in their classes; a peer in the member's own class has
  // a partner at the opposite offset in the class too (its mirrored sender).
  for (int r = 0; r < npus; ++r) {
    const int c = m.class_of[r];
    const int rep = m.rep[c];
    for (const Peer& p : peers[c]) {
      int mine = Shift(t, r, p.offset, +1);
      if (declared) {
        // A generator's class moves its peers with the rank: check the network sees the same offset.
        mine = r + p.rank_delta;
        if (mine < 0 || mine >= npus || Offset(t, r, mine) != p.offset) {
          d.note = "rank " + std::to_string(r) + "'s peer " + (mine >= 0 && mine < npus ? std::to_string(mine) : "") +
                   " is not at the network offset of its representative's peer (rank " + std::to_string(rep) + " -> " +
                   std::to_string(rep + p.rank_delta) + ")";
          return d;
        }
      }
      const int theirs = rep + p.rank_delta;
      if (m.class_of[mine] != m.class_of[theirs]) {
        d.note = "rank " + std::to_string(r) + "'s peer " + std::to_string(mine) + " is in rank class " +
                 std::to_string(m.class_of[mine]) + ", its representative's peer " + std::to_string(theirs) +
                 " in class " + std::to_string(m.class_of[theirs]);
        return d;
      }
      if (p.same_class && m.class_of[Shift(t, r, p.offset, -1)] != c) {
        d.note = "rank " + std::to_string(r) + " exchanges messages inside its class, but rank " +
                 std::to_string(Shift(t, r, p.offset, -1)) + " at the opposite offset is in another class";
        return d;
      }
    }
  }
  std::sort(d.rep_graphs.begin(), d.rep_graphs.end(), [](const NpuGraph& a, const NpuGraph& b) { return a.rank < b.rank; });
  d.use = true;
  d.note = std::to_string(classes) + " rank class" + (classes == 1 ? "" : "es") + " (" +
           (declared ? "the generator's pipeline stages and roles" : "traces equal up to node ids and peer offsets") +
           "): one representative each simulated for all " + std::to_string(npus) + " ranks";
  return d;
}

Result<ClassDecision> DecideRankClassesForRun(const RunConfig& config, const SystemOptions& so, RemoteMemoryKind mem,
                                              const Topology& topology, const GraphSource& source, GraphLoadOptions lo) {
  std::map<std::string, std::vector<int>> named = source.CommGroups();
  if (!config.comm_group_path.empty() && named.empty()) {
    auto read = ReadCommGroupJson(config.comm_group_path, topology.npus());
    if (!read.ok()) return read.status();
    named = std::move(read.value());
  }
  std::map<std::string, int> index;
  std::vector<std::vector<int>> groups;
  for (auto& [name, ranks] : named) {
    index[name] = static_cast<int>(groups.size());
    std::sort(ranks.begin(), ranks.end());
    groups.push_back(ranks);
  }
  lo.groups = &index;
  ClassInputs in;
  in.config = &config;
  in.so = &so;
  in.mem = mem;
  in.topology = &topology;
  in.source = &source;
  in.groups = &groups;
  in.load = [&](int r) { return source.Load(r, lo); };
  return DecideRankClasses(in);
}

}  // namespace orrery
