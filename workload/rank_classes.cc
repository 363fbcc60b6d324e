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
  bool flat = false;  // not whole dimensions: the engine runs a flat ring over the sorted members
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
    out[g].flat = !aligned && ranks.size() > 1;
    out[g].key = keys.emplace(std::make_tuple(ranks.size(), varies, aligned), static_cast<int>(keys.size())).first->second;
  }
  return out;
}

std::string ConfigReason(const ClassInputs& in) {
  const Spec& c = *in.spec;
  if (c.backend != "analytical") return "backend " + c.backend + " is not symmetric (only analytical is)";
  const RemoteMemoryKind mem = c.remote_memory.kind;
  if (mem == RemoteMemoryKind::kPool || mem == RemoteMemoryKind::kPerNode || !c.files.memory_config.empty()) {
    return "remote memory is shared between ranks";
  }
  for (const Dim& d : in.topology->dims()) {
    if (d.block == Block::kMesh) return "a Mesh dimension (its hop counts depend on the position)";
  }
  if (c.observe.critical_path) return "--critical-path records every rank";
  if (!c.observe.timeline_path.empty()) return "--timeline draws every rank";
  return "";
}

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
    const bool flat_ring = flat_rings && n.group >= 0 && shapes[n.group].flat &&
                           (list->empty() || (*list)[0].kind != AlgoKind::kDirect);  // empty: ring
    if (n.group >= 0 && !shapes[n.group].uniform && !flat_ring) {
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

// Classes of trace files: every rank's graph compared (hash, then node by
// node) with the first rank of each class so far; the peers of each class.
Status ClassesFromGraphs(const ClassInputs& in, const std::vector<GroupShape>& shapes, std::vector<int32_t>* class_of,
                         std::vector<std::vector<Peer>>* peers, std::vector<uint8_t>* group_used, std::string* reason) {
  const Topology& t = *in.topology;
  std::vector<NpuGraph> heads;
  std::unordered_map<uint64_t, std::vector<int>> by_hash;
  class_of->assign(t.npus(), -1);
  for (int r = 0; r < t.npus(); ++r) {
    auto g = in.load(r);
    if (!g.ok()) return g.status();
    *reason = GraphReason(g.value(), in.spec->options, shapes, false);
    if (!reason->empty()) return Status::Ok();
    for (const WorkNode& n : g->nodes) {
      if (n.kind == NodeKind::kColl && n.group >= 0) (*group_used)[n.group] = 1;
    }
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
    if (heads.size() + 1 > static_cast<size_t>(t.npus()) / 2) {
      // Classes would save less than half the work, and their first graphs
      // would cost as much memory as the full run's: stop reading.
      *reason = "more than half the ranks differ from every other (" + std::to_string(heads.size() + 1) +
                " distinct graphs up to rank " + std::to_string(r) + ")";
      return Status::Ok();
    }
    (*class_of)[r] = static_cast<int32_t>(heads.size());
    bucket.push_back(static_cast<int>(heads.size()));
    peers->push_back(PeersOf(g.value()));
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
  // 1. Ranks with equal graphs: the generator's classes, or graphs compared.
  std::vector<int32_t> graph_class;
  std::vector<std::vector<Peer>> class_peers;
  // Groups some collective uses: every rank's (trace files), the representatives' (a generator,
  // whose members use the group of the same kind: inside a class when the representative's is).
  std::vector<uint8_t> group_used(in.groups->size(), 0);
  const std::vector<int>* declared = in.source->DeclaredClasses();
  std::vector<int> probe;
  if (declared && !in.source->RankPeers(0, &probe)) declared = nullptr;
  std::vector<uint32_t> peer_begin(npus + 1, 0);
  std::vector<int32_t> peer_of;  // each rank's distinct peers, in its class's order
  // A generator's members use "the group of the same kind": the group that
  // holds them with their representative's group's member offsets (`fine`).
  std::vector<int> fine(in.groups->size(), 0);
  // Per declared class: the kinds of non-uniform groups its collectives run a flat ring on.
  std::vector<std::vector<int>> flat_kinds;
  std::vector<std::vector<int>> flat_groups_of;  // per rank: its non-uniform flat groups
  std::map<int, NpuGraph> loaded;                 // graphs read for that, kept for the representatives
  if (declared) {
    std::map<std::vector<int>, int> ids;
    std::vector<int> offs;
    for (size_t g = 0; g < in.groups->size(); ++g) {
      const std::vector<int>& ranks = (*in.groups)[g];
      offs.clear();
      for (int r : ranks) offs.push_back(Offset(t, ranks.empty() ? 0 : ranks[0], r));
      fine[g] = ids.emplace(offs, static_cast<int>(ids.size())).first->second;
    }
    flat_groups_of.resize(npus);
    bool any_flat = false;
    for (size_t g = 0; g < in.groups->size(); ++g) {
      if (shapes[g].uniform || !shapes[g].flat) continue;
      any_flat = true;
      for (int r : (*in.groups)[g]) flat_groups_of[r].push_back(static_cast<int>(g));
    }
    int num_declared = 0;
    for (int c : *declared) num_declared = std::max(num_declared, c + 1);
    flat_kinds.resize(num_declared);
    std::vector<uint8_t> seen(num_declared, 0);
    for (int r = 0; r < npus && any_flat; ++r) {
      const int c = (*declared)[r];
      if (seen[c]) continue;
      seen[c] = 1;
      auto g = in.load(r);
      if (!g.ok()) return g.status();
      for (const WorkNode& n : g->nodes) {
        if (n.kind != NodeKind::kColl || n.group < 0 || shapes[n.group].uniform || !shapes[n.group].flat) continue;
        if (std::find(flat_kinds[c].begin(), flat_kinds[c].end(), fine[n.group]) == flat_kinds[c].end()) {
          flat_kinds[c].push_back(fine[n.group]);
        }
      }
      std::sort(flat_kinds[c].begin(), flat_kinds[c].end());
      loaded.emplace(r, std::move(g.value()));
    }
    // The source's classes, split by the network distance of each rank's
    // peers (node by node, then its flat rings' neighbours) and by which of
    // them are the same rank: ranks of one class then have equal graphs up to
    // renaming, and every message of theirs the same delay.
    std::map<std::pair<int, std::vector<int64_t>>, int32_t> ids_by_key;
    std::vector<int64_t> key;
    std::vector<int> mine;
    std::vector<int64_t> mine_distance;
    graph_class.resize(npus);
    for (int r = 0; r < npus; ++r) {
      in.source->RankPeers(r, &probe);
      key.clear();
      mine.clear();
      mine_distance.clear();
      auto add = [&](int p) {
        size_t i = 0;
        while (i < mine.size() && mine[i] != p) ++i;
        if (i == mine.size()) {
          mine.push_back(p);
          mine_distance.push_back(Distance(t, r, p));
        }
        key.push_back(mine_distance[i]);
        key.push_back(static_cast<int64_t>(i));
      };
      for (int p : probe) add(p);
      for (int kind : flat_kinds.empty() ? std::vector<int>{} : flat_kinds[(*declared)[r]]) {
        for (int g : flat_groups_of[r]) {
          if (fine[g] != kind) continue;
          const std::vector<int>& ranks = (*in.groups)[g];
          const size_t i = std::lower_bound(ranks.begin(), ranks.end(), r) - ranks.begin();
          add(ranks[(i + ranks.size() - 1) % ranks.size()]);
          add(ranks[(i + 1) % ranks.size()]);
        }
      }
      graph_class[r] = ids_by_key.emplace(std::make_pair((*declared)[r], key), static_cast<int32_t>(ids_by_key.size()))
                           .first->second;
      peer_of.insert(peer_of.end(), mine.begin(), mine.end());
      peer_begin[r + 1] = static_cast<uint32_t>(peer_of.size());
    }
    class_peers.resize(ids_by_key.size());
  } else if (Status st = ClassesFromGraphs(in, shapes, &graph_class, &class_peers, &group_used, &d.note); !st.ok()) {
    return st;
  } else if (!d.note.empty()) {
    return d;
  }
  // 2. Each rank's peers, in its class's order (a generator's: above).
  for (int r = 0; r < npus && !declared; ++r) {
    for (const Peer& p : class_peers[graph_class[r]]) peer_of.push_back(Shift(t, r, p.offset, +1));
    peer_begin[r + 1] = static_cast<uint32_t>(peer_of.size());
  }
  // 3. Split until every member's peers are in the classes of every other
  // member's peers (a straggler's peers leave their class, and theirs, ...).
  RankClassMap& m = d.map;
  m.class_of = graph_class;
  size_t count = 0;
  for (;;) {
    std::map<std::vector<int32_t>, int32_t> ids;
    std::vector<int32_t> next(npus);
    std::vector<int32_t> sig;
    for (int r = 0; r < npus; ++r) {
      sig.assign(1, m.class_of[r]);
      for (uint32_t k = peer_begin[r]; k < peer_begin[r + 1]; ++k) sig.push_back(m.class_of[peer_of[k]]);
      next[r] = ids.emplace(sig, static_cast<int32_t>(ids.size())).first->second;
    }
    m.class_of = std::move(next);
    if (ids.size() == count) break;
    count = ids.size();
  }
  const int classes = static_cast<int>(count);
  if (classes >= npus) {
    d.note = "every rank is a class of its own";
    return d;
  }
  m.rep.assign(classes, -1);
  m.size.assign(classes, 0);
  for (int c : m.class_of) m.size[c]++;
  const int split = classes - static_cast<int>(class_peers.size());

  std::vector<std::vector<int>> fine_used(classes);
  // A flat ring may span classes (its neighbours are peers); then each of them
  // has its representative in the ring the representatives run.
  auto spans_ok = [&](int g) { return declared && !shapes[g].uniform && shapes[g].flat; };
  std::vector<uint8_t> spanned(in.groups->size(), 0);
  // 4. Representatives: from rank 0, follow each representative's messages to
  // other classes; the peer becomes its class's representative, so every
  // message between classes is one between simulated ranks.
  std::vector<uint32_t> slab_masks;  // involved dimensions of collectives on all NPUs
  std::deque<int> queue;
  for (int seed = 0; seed < npus; ++seed) {
    if (m.rep[m.class_of[seed]] >= 0) continue;
    m.rep[m.class_of[seed]] = seed;
    queue.push_back(seed);
    while (!queue.empty()) {
      const int rep = queue.front();
      queue.pop_front();
      const auto kept = loaded.find(rep);
      auto g = kept != loaded.end() ? Result<NpuGraph>(std::move(kept->second)) : in.load(rep);
      if (!g.ok()) return g.status();
      d.note = GraphReason(g.value(), in.spec->options, shapes, declared != nullptr);
      if (!d.note.empty()) return d;
      const int c = m.class_of[rep];
      for (const WorkNode& n : g->nodes) {
        if (n.kind == NodeKind::kColl) {
          if (n.group >= 0) {
            group_used[n.group] = 1;
            if (spans_ok(n.group) && !spanned[n.group]) {
              // Every class in this ring is represented by a member of it (the
              // messages to its other members go there: RankClassMap::Simulated).
              spanned[n.group] = 1;
              const std::vector<int>& ranks = (*in.groups)[n.group];
              for (int x : ranks) {
                int& other = m.rep[m.class_of[x]];
                if (other < 0) {
                  other = x;
                  queue.push_back(x);
                } else if (!std::binary_search(ranks.begin(), ranks.end(), other)) {
                  d.note = "rank " + std::to_string(rep) + "'s communicator group " + std::to_string(n.group) +
                           " spans rank classes, but rank " + std::to_string(other) + ", which represents rank " +
                           std::to_string(x) + "'s class, is not in it";
                  return d;
                }
              }
            }
            if (std::find(fine_used[c].begin(), fine_used[c].end(), fine[n.group]) == fine_used[c].end()) {
              fine_used[c].push_back(fine[n.group]);
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
        if (m.class_of[p] == c) continue;
        int& other = m.rep[m.class_of[p]];
        if (other < 0) {
          other = p;
          queue.push_back(p);
        } else if (other != p && !declared) {  // a generator's: checked below (step 5b)
          d.note = "rank " + std::to_string(rep) + " (representing class " + std::to_string(c) + ") exchanges messages "
                   "with rank " + std::to_string(p) + ", but rank " + std::to_string(other) + " represents its class";
          return d;
        }
      }
      d.rep_graphs.push_back(std::move(g.value()));
    }
  }
  // 5. Collectives stay inside a class.
  for (size_t g = 0; g < in.groups->size(); ++g) {
    if (!group_used[g] || spans_ok(static_cast<int>(g))) continue;
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
  if (declared) {
    std::vector<std::vector<int>> groups_of(npus);
    for (size_t g = 0; g < in.groups->size(); ++g) {
      for (int r : (*in.groups)[g]) groups_of[r].push_back(static_cast<int>(g));
    }
    // Each group's members are checked once (the members of a group share its
    // answer), so this is O(NPUs + groups x members), not NPUs x group size.
    std::vector<uint8_t> checked(in.groups->size(), 0);
    for (int r = 0; r < npus; ++r) {
      const int c = m.class_of[r];
      for (int key : fine_used[c]) {
        bool found = false;
        for (int g : groups_of[r]) {
          if (fine[g] != key) continue;
          found = true;
          if (checked[g] || spans_ok(g)) continue;
          checked[g] = 1;
          for (int x : (*in.groups)[g]) {
            if (m.class_of[x] != c) {
              d.note = "rank " + std::to_string(r) + "'s communicator group " + std::to_string(g) + " spans rank classes " +
                       std::to_string(c) + " and " + std::to_string(m.class_of[x]) + " (rank " + std::to_string(x) + ")";
              return d;
            }
          }
        }
        if (!found) {
          d.note = "rank " + std::to_string(r) + " has no communicator group shaped like its representative's (rank " +
                   std::to_string(m.rep[c]) + ")";
          return d;
        }
      }
    }
  }
  // 5b. A generator's point-to-point message to another class's member that
  // is not simulated goes to that class's representative (RankClassMap::
  // Simulated), as if from the sender's representative. Exact when each
  // representative receives a tag from one member of a class only (so the
  // representative's messages stand for that member's, node for node: same
  // class graph, same instant, same distance) and as many as the sending
  // class's representative sends into its class with that tag.
  if (declared) {
    std::map<std::tuple<int, int, uint64_t>, int> sender;     // (rep, sending class, tag): the one member
    std::map<std::tuple<int, int, uint64_t>, int64_t> count;  // receives minus the sending rep's sends
    for (const NpuGraph& g : d.rep_graphs) {
      const int c = m.class_of[g.rank];
      for (const WorkNode& n : g.nodes) {
        if (n.kind == NodeKind::kRecv && m.class_of[n.comm_src] != c) {
          const auto key = std::make_tuple(g.rank, static_cast<int>(m.class_of[n.comm_src]), n.comm_tag);
          const auto [it, added] = sender.emplace(key, n.comm_src);
          if (!added && it->second != n.comm_src) {
            d.note = "rank " + std::to_string(g.rank) + " receives tag " + std::to_string(n.comm_tag) + " from ranks " +
                     std::to_string(it->second) + " and " + std::to_string(n.comm_src) + " of one class";
            return d;
          }
          count[key] += 1;
        } else if (n.kind == NodeKind::kSend && m.class_of[n.comm_dst] != c) {
          count[std::make_tuple(m.rep[m.class_of[n.comm_dst]], c, n.comm_tag)] -= 1;
        }
      }
    }
    for (const auto& [key, left] : count) {
      if (left == 0) continue;
      d.note = "rank " + std::to_string(std::get<0>(key)) + " receives tag " + std::to_string(std::get<2>(key)) +
               " from class " + std::to_string(std::get<1>(key)) + " a different number of times than that class's "
               "representative sends it into its class";
      return d;
    }
  }
  // A collective on all NPUs (or whole dimensions of each rank): neighbours
  // along every dimension it spans are in one class.
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
  // 6. A point-to-point message inside a class is mirrored: a member sends the
  // representative the same message (same node, so same tag and instant, and
  // the same distance) when it sends its own; the engine injects that one.
  if (declared) {
    // The member whose peer at that node is the representative, among the
    // representative's own peers of its class.
    std::vector<int> mine, theirs;
    std::vector<std::pair<int, std::vector<int>>> cands;
    for (int rep : m.rep) {
      const int c = m.class_of[rep];
      in.source->RankPeers(rep, &mine);
      cands.clear();
      for (size_t i = 0; i < mine.size(); ++i) {
        const int p = mine[i];
        if (m.class_of[p] != c) continue;
        int from = -1;
        for (uint32_t k = peer_begin[rep]; k < peer_begin[rep + 1] && from < 0; ++k) {
          const int x = peer_of[k];
          if (m.class_of[x] != c) continue;
          auto it = std::find_if(cands.begin(), cands.end(), [&](const auto& e) { return e.first == x; });
          if (it == cands.end()) {
            in.source->RankPeers(x, &theirs);
            cands.emplace_back(x, theirs);
            it = cands.end() - 1;
          }
          if (i < it->second.size() && it->second[i] == rep) from = x;
        }
        const uint64_t key = static_cast<uint64_t>(rep) << 32 | static_cast<uint32_t>(p);
        const int known = m.MirrorFrom(rep, p);
        if (from < 0 || (known >= 0 && known != from)) {
          d.note = "rank " + std::to_string(rep) + " exchanges messages with rank " + std::to_string(p) +
                   " of its class, but no single member of the class sends it the matching message";
          return d;
        }
        if (known < 0) {
          m.mirror_from.emplace_back(key, from);
          std::sort(m.mirror_from.begin(), m.mirror_from.end());
        }
      }
    }
  } else {
    // Trace files: classes are translations, so the member at the opposite
    // offset does the same; it must be a member.
    for (int r = 0; r < npus; ++r) {
      for (uint32_t k = peer_begin[r]; k < peer_begin[r + 1]; ++k) {
        if (m.class_of[peer_of[k]] != m.class_of[r]) continue;
        const int sender = Shift(t, r, Offset(t, r, peer_of[k]), -1);
        if (m.class_of[sender] != m.class_of[r]) {
          d.note = "rank " + std::to_string(r) + " exchanges messages with rank " + std::to_string(peer_of[k]) +
                   " of its class, but rank " + std::to_string(sender) + " at the opposite offset is in another class";
          return d;
        }
      }
    }
  }
  std::sort(d.rep_graphs.begin(), d.rep_graphs.end(), [](const NpuGraph& a, const NpuGraph& b) { return a.rank < b.rank; });
  d.use = true;
  // The same words whichever source found the classes (a generated workload
  // and its written traces give identical reports).
  d.note = std::to_string(classes) + " rank class" + (classes == 1 ? "" : "es") +
           " (ranks whose graphs are equal up to node ids, peer offsets and groups, on equivalent network "
           "positions" + (split > 0 ? "; " + std::to_string(split) + " split off by the classes of their peers" : "") +
           "): one representative each simulated for all " + std::to_string(npus) + " ranks";
  return d;
}

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
