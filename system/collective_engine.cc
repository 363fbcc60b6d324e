#include "system/collective_engine.h"

#include <algorithm>

namespace orrery {

CollectiveEngine::CollectiveEngine(EventQueue* queue, const Topology* topology, SystemOptions options, bool mirror)
    : queue_(queue),
      topology_(topology),
      mirror_(mirror),
      options_(std::move(options)),
      transport_(queue, topology, mirror) {
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
  dbt_phases_.assign(static_cast<size_t>(n) * std::max(1, topology->num_dims()), 0);
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
  struct Named {
    const char* key;
    const std::vector<AlgoSpec>* v;
  };
  Named lists[] = {{"all-reduce-implementation", &options_.all_reduce},
                   {"all-gather-implementation", &options_.all_gather},
                   {"reduce-scatter-implementation", &options_.reduce_scatter},
                   {"all-to-all-implementation", &options_.all_to_all}};
  for (const auto& l : lists) {
    if (l.v->empty()) continue;
    const bool one = (*l.v)[0].one;
    if (!one && static_cast<int>(l.v->size()) != dims) {
      return Status::Invalid(std::string("system configuration: \"") + l.key + "\" lists " +
                             std::to_string(l.v->size()) + " algorithm(s) but the network has " + std::to_string(dims) +
                             " dimension(s); give one per dimension");
    }
    for (size_t d = 0; d < l.v->size() && d < static_cast<size_t>(dims); ++d) {
      const AlgoSpec& a = (*l.v)[d];
      const int p = a.one ? topology_->npus() : topology_->dims()[d].npus;
      if ((a.kind == AlgoKind::kHalvingDoubling || a.kind == AlgoKind::kDoubleBinaryTree) && (p & (p - 1)) != 0) {
        return Status::Invalid(std::string("system configuration: \"") + l.key + "\"[" + std::to_string(d) + "] = \"" +
                               a.name + "\" needs a power-of-two number of NPUs, but dimension " + std::to_string(d) +
                               " has " + std::to_string(p));
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
  // Its shape on the dimensions: aligned when it is exactly the NPUs of some
  // whole dimensions (system/comm_group.h).
  const Topology& t = *topology_;
  g.grid = GridOf(t, g.ranks);
  g.aligned = g.grid.aligned;
  g.dims.assign(t.num_dims(), false);
  for (int d = 0; d < t.num_dims(); ++d) g.dims[d] = g.grid.n[d] > 1;
  g.per_dimension = PhasesPerDimension(t, g.grid);
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

static Status NotAMember(int rank, const CommGroup& g) {
  return Status::Invalid("rank " + std::to_string(rank) + " issued a collective on communicator group \"" + g.name +
                         "\" but is not a member of it");
}

Status CollectiveEngine::IssueCollective(int rank, ComType type, uint64_t bytes, const std::vector<bool>& involved,
                                         int group, CollectiveDoneClient* client, uint64_t cookie,
                                         std::string* algorithm_used, int stream) {
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
  handle->stream = stream;
  npus_[rank]->StartCollective(handle, std::move(plan.value()), group, pos, counter);
  return Status::Ok();
}

Status CollectiveEngine::IssueRooted(int rank, RootedKind kind, uint64_t bytes, int root, int group,
                                     CollectiveDoneClient* client, uint64_t cookie, std::string* algorithm_used,
                                     int stream) {
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
  handle->stream = stream;
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

// `dst` is not simulated when it is in `src`'s class: the class member that
// sends `src` this message (same node, same instant, equal delay:
// RankClassMap::MirrorFrom; else the member at the same offset behind `src`)
// stands for it, and `src` receives it.
int CollectiveEngine::MirroredSender(int src, int dst) const {
  const int from = classes_->MirrorFrom(src, dst);
  return from >= 0 ? from : MirrorSender(*topology_, src, dst);
}

std::pair<int, int> CollectiveEngine::SendMatchKey(int src, int dst) const {
  if (classes_ && classes_->SameClass(src, dst)) return {src, MirroredSender(src, dst)};
  return {transport_.SimulatedPeer(src, dst), src};
}

void CollectiveEngine::SendP2P(int src, int dst, uint64_t bytes, uint64_t tag, RecvClient* on_sent,
                               uint64_t sent_cookie) {
  if (classes_ && classes_->SameClass(src, dst)) {
    transport_.Send(MirroredSender(src, dst), src, bytes, tags::PointToPoint(tag), 0, on_sent, sent_cookie);
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
