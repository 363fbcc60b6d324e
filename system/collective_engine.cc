#include "system/collective_engine.h"
#include "system/themis.h"

#include <algorithm>

#include <boost/container/small_vector.hpp>

namespace orrery {

CollectiveEngine::CollectiveEngine(EventQueue* queue, const Topology* topology, SystemOptions options, bool mirror)
    : queue_(queue), topology_(topology), mirror_(mirror), options_(std::move(options)), transport_(queue, topology, mirror) {
  store_.set_directory_on(!mirror_);
  store_.set_groups(&groups_);
  default_impl_.assign(std::max(1, topology->num_dims()), AlgoSpec{});
  ctx_.queue = queue_;
  ctx_.store = &store_;
  ctx_.transport = &transport_;
  ctx_.endpoint_delay_ns = options_.endpoint_delay_ns;
  ctx_.local_mem_bw = options_.local_mem_bw;
  ctx_.options = &options_;
  ctx_.topology = topology_;
  ctx_.phase_observers = &phase_observers_;
  const int n = topology->npus();
  const int simulated = mirror ? 1 : n;
  npus_.reserve(simulated);
  if (simulated > 1 && place_by_rank_for_test) store_.PlaceByRank(simulated);
  for (int r = 0; r < simulated; ++r) {
    npus_.push_back(std::make_unique<NpuSys>(&ctx_, r, std::max(1, topology->num_dims())));
  }
  chunk_counters_.emplace_back(n, first_chunk_number_for_test);
  dbt_counter_.assign(static_cast<size_t>(n) * std::max(1, topology->num_dims()), 0);
  queue_->SetPrefetcher(this, &CollectiveEngine::PrefetchDelivery, this);
}

// Reads only: the message's slot (stage 0), the receiving chunk's first
// line, found as HandleEvent will find it (stage 1), then the algorithm the
// chunk points to (stage 2: OnRecv goes straight there).
void CollectiveEngine::PrefetchDelivery(void* ctx, uint64_t token, int stage) {
  CollectiveEngine* e = static_cast<CollectiveEngine*>(ctx);
  const MessageTransport::Msg* msg = e->transport_.Peek(token);
  if (!msg) return;
  const MessageTransport::Msg& m = *msg;
  if (stage == 0) {
    __builtin_prefetch(&m);
    return;
  }
  Chunk* s = e->DirectoryReceiver(m);
  if (!s) return;
  if (stage == 1) {
    __builtin_prefetch(s);
  } else if (const void* algo = s->algorithm()) {
    __builtin_prefetch(algo);
  }
}

Status CollectiveEngine::Validate() const {
  const int dims = topology_->num_dims();
  struct Named { const char* key; const std::vector<AlgoSpec>* v; };
  Named lists[] = {{"all-reduce-implementation", &options_.all_reduce},
                   {"all-gather-implementation", &options_.all_gather},
                   {"reduce-scatter-implementation", &options_.reduce_scatter},
                   {"all-to-all-implementation", &options_.all_to_all}};
  for (const auto& l : lists) {
    if (l.v->empty()) continue;
    const bool one = (*l.v)[0].one;
    if (!one && static_cast<int>(l.v->size()) != dims) {
      return Status::Invalid(std::string("system configuration: \"") + l.key + "\" lists " +
                             std::to_string(l.v->size()) + " algorithm(s) but the network has " +
                             std::to_string(dims) + " dimension(s); give one per dimension");
    }
    for (size_t d = 0; d < l.v->size() && d < static_cast<size_t>(dims); ++d) {
      const AlgoSpec& a = (*l.v)[d];
      const int p = a.one ? topology_->npus() : topology_->dims()[d].npus;
      if ((a.kind == AlgoKind::kHalvingDoubling || a.kind == AlgoKind::kDoubleBinaryTree) && (p & (p - 1)) != 0) {
        return Status::Invalid(std::string("system configuration: \"") + l.key + "\"[" + std::to_string(d) +
                               "] = \"" + a.name + "\" needs a power-of-two number of NPUs, but dimension " +
                               std::to_string(d) + " has " + std::to_string(p));
      }
    }
  }
  return Status::Ok();
}

Result<int> CollectiveEngine::AddCommGroup(const std::string& name, std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  CommGroup g;
  g.id = static_cast<int>(groups_.size());
  g.name = name;
  g.ranks = ranks;
  // Aligned when the group is exactly {base + sum c_d * stride_d} over a set of whole dimensions.
  const Topology& t = *topology_;
  g.dims.assign(t.num_dims(), false);
  if (!ranks.empty()) {
    const int base = ranks[0];
    size_t expect = 1;
    for (int d = 0; d < t.num_dims(); ++d) {
      bool varies = false;
      for (int r : ranks) varies |= t.Coord(r, d) != t.Coord(base, d);
      g.dims[d] = varies;
      if (varies) expect *= t.dims()[d].npus;
    }
    bool aligned = expect == ranks.size();
    if (aligned) {
      for (int r : ranks) {
        for (int d = 0; d < t.num_dims(); ++d) {
          if (!g.dims[d] && t.Coord(r, d) != t.Coord(base, d)) aligned = false;
        }
      }
    }
    g.aligned = aligned;
  }
  if (groups_.size() >= static_cast<size_t>(tags::kMaxGroups)) {
    return Status::Invalid("communicator group \"" + name + "\": more than " + std::to_string(tags::kMaxGroups) +
                           " groups (the message tag holds the group in 22 bits)");
  }
  chunk_counters_.emplace_back(g.ranks.size(), first_chunk_number_for_test);
  groups_.push_back(std::move(g));
  return static_cast<int>(groups_.size()) - 1;
}

uint64_t* CollectiveEngine::ChunkCounter(int group, int rank, int* pos) {
  *pos = rank;
  if (group < 0) return &chunk_counters_[0][rank];
  const std::vector<int>& m = groups_[group].ranks;
  const auto it = std::lower_bound(m.begin(), m.end(), rank);
  if (it == m.end() || *it != rank) return nullptr;
  *pos = static_cast<int>(it - m.begin());
  return &chunk_counters_[group + 1][*pos];
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

// A plugin's graph must be well formed: peers among the members, children in
// range, dependency counts that match.
static std::string CheckGraph(const CustomGraph& g, const CollectiveRequest& req) {
  std::vector<uint32_t> parents(g.size(), 0);
  for (size_t i = 0; i < g.size(); ++i) {
    const CustomOp& op = g[i];
    if ((op.kind == CustomOp::kSend || op.kind == CustomOp::kRecv) &&
        std::find(req.members.begin(), req.members.end(), op.peer) == req.members.end()) {
      return "op " + std::to_string(i) + " talks to rank " + std::to_string(op.peer) + ", not a member";
    }
    for (uint32_t c : op.children) {
      if (c >= g.size() || c == i) return "op " + std::to_string(i) + " has child " + std::to_string(c) + " out of range";
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

// Recycles the collective's handle, then tells the real client (which may
// issue a new collective that reuses this very handle).
void HandleOwner::OnCollectiveDone(uint64_t) {
  CollectiveDoneClient* c = inner;
  const uint64_t k = cookie;
  inner = nullptr;
  engine->FreeHandle(slot);
  c->OnCollectiveDone(k);
}

CollectiveHandle* CollectiveEngine::NewHandle(CollectiveDoneClient* client, uint64_t cookie) {
  uint32_t slot;
  if (!free_handles_.empty()) {
    slot = free_handles_.back();
    free_handles_.pop_back();
  } else {
    slot = static_cast<uint32_t>(handles_.size());
    handles_.push_back(std::make_unique<HandleOwner>());
  }
  HandleOwner& h = *handles_[slot];
  h.handle = CollectiveHandle{};
  h.handle.client = &h;
  h.handle.cookie = cookie;
  h.inner = client;
  h.cookie = cookie;
  h.slot = slot;
  h.engine = this;
  return &h.handle;
}

Result<std::vector<std::vector<PhaseSpec>>> CollectiveEngine::Plan(int rank, ComType type, uint64_t bytes,
                                                                  const std::vector<bool>& involved_in, int group,
                                                                  std::string* algorithm_used) {
  const Topology& t = *topology_;
  if (algorithm_used) algorithm_used->clear();
  // The configured algorithms, or ring on every dimension (not copied: a
  // collective is planned on every rank).
  const std::vector<AlgoSpec>& impl =
      options_.ImplFor(type).empty() ? default_impl_ : options_.ImplFor(type);
  for (const AlgoSpec& a : impl) {
    // Under localBWAware an all-reduce's reduce-scatter and all-gather phases
    // may run on a doubleBinaryTree dimension (as a tree all-reduce, see Plan).
    if (a.kind == AlgoKind::kDoubleBinaryTree && type != ComType::kAllReduce) {
      return Status::Invalid(std::string("system configuration: a ") + ComTypeName(type) +
                             " was issued but its implementation is \"doubleBinaryTree\", which implements "
                             "all-reduce only; valid here: ring, direct, halvingDoubling");
    }
    if (a.kind == AlgoKind::kInSwitch) {
      if (type == ComType::kAllToAll) {
        return Status::Invalid("system configuration: an ALL_TO_ALL was issued but its implementation is \"inSwitch\"; "
                               "in-switch collectives are all-reduce, reduce-scatter and all-gather");
      }
      if (!(options_.in_switch_reduction_bw > 0) && type != ComType::kAllGather) {
        return Status::Invalid("system configuration: \"inSwitch\" needs \"in-switch-reduction-bw\" (bytes per ns "
                               "the switch combines)");
      }
    }
    if (a.kind == AlgoKind::kHalvingDoubling && type == ComType::kAllToAll) {
      return Status::Invalid("system configuration: an ALL_TO_ALL was issued but \"all-to-all-implementation\" is "
                             "\"halvingDoubling\", which has no all-to-all; valid: ring, direct");
    }
  }
  // A dimension the node does not name is involved.
  auto involved = [&](int d) { return static_cast<size_t>(d) >= involved_in.size() || involved_in[d]; };

  // The logical dimensions: one per network dimension, or a single ring. No
  // heap for the usual few dimensions: a collective is planned on every rank.
  struct LDim {
    int size;
    const AlgoSpec* algo;
    int queue;
    int net_dim;  // -1: a flat ring over a communicator group
  };
  boost::container::small_vector<LDim, 4> ldims;
  const CommGroup* g = group >= 0 ? &groups_[group] : nullptr;
  AlgoSpec flat;  // the flat group's ring (or direct)
  if (g && !g->aligned) {
    flat = impl[0];
    if (flat.kind == AlgoKind::kHalvingDoubling || flat.kind == AlgoKind::kDoubleBinaryTree) flat = AlgoSpec{};
    flat.name = "ring(flat group)";
    if (flat.kind != AlgoKind::kDirect) flat.kind = AlgoKind::kRing;
    ldims.push_back(LDim{static_cast<int>(g->ranks.size()), &flat, 0, -1});
  } else if (impl[0].one) {
    ldims.push_back(LDim{t.npus(), &impl[0], 0, 0});
  } else {
    for (int d = 0; d < t.num_dims(); ++d) {
      const bool in = g ? g->dims[d] : involved(d);
      if (in && impl[d].kind == AlgoKind::kInSwitch && t.dims()[d].block != Block::kSwitch) {
        return Status::Invalid("system configuration: \"inSwitch\" on dimension " + std::to_string(d) + ", which is a " +
                               BlockName(t.dims()[d].block) + "; in-switch collectives need a Switch dimension");
      }
      ldims.push_back(LDim{in ? t.dims()[d].npus : 1, &impl[d], d, d});
    }
  }
  auto ring_for = [&](const LDim& ld) {
    if (ld.net_dim < 0) {
      RingView v;
      v.members = &g->ranks;
      v.size = static_cast<int>(g->ranks.size());
      v.index = static_cast<int>(std::lower_bound(g->ranks.begin(), g->ranks.end(), rank) - g->ranks.begin());
      return v;
    }
    return DimRing(rank, ld.net_dim, *ld.algo);
  };

  // ASTRA-sim's chunking (docs/parity.md, "Sizes that do not divide evenly"):
  // chunk = floor(bytes / splits); except for all-gather a chunk is at least
  // one byte per NPU of the whole network, and the collective then becomes
  // splits chunks of that size; every chunk is a full chunk, ceil(bytes /
  // chunk) of them (the last one is not cut to the remainder).
  const uint64_t splits = static_cast<uint64_t>(options_.preferred_dataset_splits);
  uint64_t chunk = bytes / splits;
  uint64_t left = bytes;
  if (bytes > 0 && type != ComType::kAllGather && static_cast<uint64_t>(t.npus()) > chunk) {
    chunk = static_cast<uint64_t>(t.npus());
    left = splits * chunk;
  }
  if (chunk == 0) chunk = bytes;  // an all-gather smaller than its splits: one chunk (ASTRA-sim never ends)
  std::vector<std::vector<PhaseSpec>> chunks;
  if (chunk > 0) chunks.reserve(std::min<uint64_t>(left / chunk + 1, 64));
  boost::container::small_vector<int, 4> order(ldims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  if (type == ComType::kAllGather) std::reverse(order.begin(), order.end());
  auto active = [&](int i) { return ldims[i].size > 1; };
  std::string plan_error;
  // Themis: per chunk, the dimensions in order of their accumulated load (the
  // first phase carries the most data, so it goes where there is most room).
  const bool themis = options_.themis && type != ComType::kAllToAll && ldims.size() > 1;
  std::vector<double> load;  // themis only
  if (themis) load.assign(ldims.size(), 0.0);
  while (left > 0) {
    const uint64_t this_chunk = chunk;
    left -= std::min(chunk, left);
    uint64_t remain = this_chunk;
    if (themis) {
      std::vector<ThemisDim> td;
      std::vector<int> act;
      for (size_t i = 0; i < ldims.size(); ++i) {
        td.push_back(ThemisDim{ldims[i].size, topology_->BytesPerNs(ldims[i].net_dim < 0 ? 0 : ldims[i].net_dim)});
        if (active(static_cast<int>(i))) act.push_back(static_cast<int>(i));
      }
      const std::vector<int> o = ThemisOrder(td, act, static_cast<double>(this_chunk), &load);
      order.assign(o.begin(), o.end());
      if (type == ComType::kAllGather) std::reverse(order.begin(), order.end());
    }
    std::vector<PhaseSpec> phases = store_.TakePhaseList();
    phases.reserve(2 * ldims.size());
    auto add = [&](ComType ct, int i) {
      PhaseSpec ps;
      ps.type = ct;
      ps.queue_id = ldims[i].queue;
      ps.size = remain;
      ps.algo = *ldims[i].algo;
      ps.ring = ring_for(ldims[i]);
      if (ps.algo.kind == AlgoKind::kPlugin) {
        CollectiveRequest req{ct, {}, rank, remain};
        for (int k = 0; k < ps.ring.size; ++k) req.members.push_back(ps.ring.Member(k));
        auto graph = std::make_shared<CustomGraph>(ps.algo.plugin->build(req));
        const std::string bad = CheckGraph(*graph, req);
        if (!bad.empty() && plan_error.empty()) {
          plan_error = "collective algorithm \"" + ps.algo.name + "\" returned an invalid graph for rank " +
                       std::to_string(rank) + " (" + ComTypeName(ct) + "): " + bad;
        }
        ps.algo.graph = std::move(graph);
        ps.algo.kind = AlgoKind::kCustom;
      }
      const uint64_t p = static_cast<uint64_t>(ps.ring.size);
      if (ps.algo.kind == AlgoKind::kDoubleBinaryTree) {
        // A tree phase is an all-reduce of its whole input whatever the phase
        // (localBWAware's reduce-scatter/all-gather too): the size is kept.
        // Each dimension alternates its own two trees.
        const int slot = rank * std::max(1, t.num_dims()) + std::max(0, ldims[i].net_dim);
        ps.dbt_root_max = (dbt_counter_[slot]++ % 2) == 0;
        ps.type = ComType::kAllReduce;
      } else if (ct == ComType::kAllGather) {
        remain = remain * p;
      } else if (ct == ComType::kReduceScatter) {
        remain = remain / p;
      }
      ps.final_size = remain;
      if (chunks.empty() && algorithm_used) {
        if (!algorithm_used->empty()) algorithm_used->push_back(',');
        algorithm_used->append(ComTypeName(ct)).append(":").append(ps.algo.name);
      }
      phases.push_back(ps);
    };
    if (type != ComType::kAllReduce || !options_.local_bw_aware) {
      for (int i : order) {
        if (active(i)) add(type, i);
      }
    } else {
      // Reduce-scatter along the order, all-reduce on the last active
      // dimension, all-gather back in reverse order.
      int last_pos = -1;
      for (size_t k = 0; k < order.size(); ++k) {
        if (active(order[k])) last_pos = static_cast<int>(k);
      }
      for (int k = 0; k < last_pos; ++k) {
        if (active(order[k])) add(ComType::kReduceScatter, order[k]);
      }
      if (last_pos >= 0) add(ComType::kAllReduce, order[last_pos]);
      for (int k = last_pos - 1; k >= 0; --k) {
        if (active(order[k])) add(ComType::kAllGather, order[k]);
      }
    }
    if (phases.empty()) break;
    chunks.push_back(std::move(phases));
  }
  if (!plan_error.empty()) return Status::Invalid(plan_error);
  return chunks;
}

static Status NotAMember(int rank, const CommGroup& g) {
  return Status::Invalid("rank " + std::to_string(rank) + " issued a collective on communicator group \"" + g.name +
                         "\" but is not a member of it");
}

Status CollectiveEngine::IssueCollective(int rank, ComType type, uint64_t bytes, const std::vector<bool>& involved, int group,
                                         CollectiveDoneClient* client, uint64_t cookie, std::string* algorithm_used) {
  auto plan = Plan(rank, type, bytes, involved, group, algorithm_used);
  if (!plan.ok()) return plan.status();
  if (plan.value().empty()) {
    // Nothing to move (zero bytes, or no dimension with more than one NPU).
    queue_->ScheduleClosureAt(queue_->Now(), [client, cookie] { client->OnCollectiveDone(cookie); });
    return Status::Ok();
  }
  int pos;
  uint64_t* counter = ChunkCounter(group, rank, &pos);
  if (!counter) return NotAMember(rank, groups_[group]);
  CollectiveHandle* handle = NewHandle(client, cookie);
  npus_[rank]->StartCollective(handle, std::move(plan.value()), group, pos, counter);
  return Status::Ok();
}

Status CollectiveEngine::IssueRooted(int rank, RootedKind kind, uint64_t bytes, int root, int group,
                                     CollectiveDoneClient* client, uint64_t cookie, std::string* algorithm_used) {
  std::vector<int> all;
  const std::vector<int>* members = nullptr;
  if (group >= 0) {
    members = &groups_[group].ranks;
  } else {
    all.resize(topology_->npus());
    for (int i = 0; i < topology_->npus(); ++i) all[i] = i;
    members = &all;
  }
  if (!std::binary_search(members->begin(), members->end(), root)) {
    return Status::Invalid("root rank " + std::to_string(root) + " is not a member of the collective's group");
  }
  static const char* kNames[] = {"chain broadcast", "chain reduce", "direct scatter", "direct gather",
                                 "dissemination barrier"};
  if (algorithm_used) *algorithm_used = kNames[static_cast<int>(kind)];
  PhaseSpec ps;
  ps.type = ComType::kAllReduce;
  ps.queue_id = 0;
  ps.size = bytes;
  ps.algo.kind = AlgoKind::kCustom;
  ps.algo.name = kNames[static_cast<int>(kind)];
  ps.algo.graph = std::make_shared<const CustomGraph>(
      BuildRootedCollective(kind, *members, rank, root, bytes, ctx_.ReduceCost(bytes)));
  int pos;
  uint64_t* counter = ChunkCounter(group, rank, &pos);
  if (!counter) return NotAMember(rank, groups_[group]);
  CollectiveHandle* handle = NewHandle(client, cookie);
  std::vector<std::vector<PhaseSpec>> chunks(1, std::vector<PhaseSpec>{ps});
  npus_[rank]->StartCollective(handle, std::move(chunks), group, pos, counter);
  return Status::Ok();
}

void CollectiveEngine::SetRankClasses(const RankClassMap* classes) {
  classes_ = classes;
  transport_.SetRankClasses(classes);
  store_.set_directory_on(!mirror_ && !classes_);
  // Only the representatives run: placement by rank would commit pages of
  // planes sized for every rank and gain nothing.
  if (classes_) store_.PlaceByRank(0);
}

// The rank that sends to `src` what `src` sends to `dst`: the same network
// offset, taken backwards (every dimension wraps; rank classes rule out Mesh).
static int MirrorSender(const Topology& t, int src, int dst) {
  int y = 0;
  for (int d = 0; d < t.num_dims(); ++d) {
    const int n = t.dims()[d].npus;
    y += ((2 * t.Coord(src, d) - t.Coord(dst, d)) % n + n) % n * t.stride(d);
  }
  return y;
}

void CollectiveEngine::SendP2P(int src, int dst, uint64_t bytes, uint64_t tag, RecvClient* on_sent,
                               uint64_t sent_cookie) {
  if (classes_ && classes_->SameClass(src, dst)) {
    // `dst` is not simulated; the class member that sends `src` this message
    // (same node, same instant, equal delay: RankClassMap::MirrorFrom; else the
    // member at the same offset behind `src`) stands for it.
    const int from = classes_->MirrorFrom(src, dst);
    transport_.Send(from >= 0 ? from : MirrorSender(*topology_, src, dst), src, bytes, tags::PointToPoint(tag), 0,
                    on_sent, sent_cookie);
    return;
  }
  // Rank classes: to another class's member that is not simulated, it goes to that class's representative.
  transport_.Send(src, dst, bytes, tags::PointToPoint(tag), 0, on_sent, sent_cookie);
}

void CollectiveEngine::PostRecvP2P(int dst, int src, uint64_t tag, RecvClient* client, uint64_t cookie) {
  npus_[dst]->PostRecv(transport_.SimulatedPeer(dst, src), tags::PointToPoint(tag), 0, client, cookie);
}

void CollectiveEngine::HandleEvent(uint32_t kind, uint64_t token) {
  store_.CollectGarbage();
  const MessageTransport::Msg m = transport_.Take(token);
  if (m.on_sent) m.on_sent->OnRecv(m.sent_cookie);
  if (tags::IsRaw(m.tag)) return;  // transport only (memory traffic): nobody posts a receive
  if (Chunk* s = DirectoryReceiver(m)) {
    s->Deliver(m.src);
    return;
  }
  npus_[m.dst]->OnArrival(m.src, m.tag, m.sub);
}

}  // namespace orrery
