#include "workload/executor.h"

#include "system/rank_class_map.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdio>

#include "core/units.h"
#include "extern/et_io.h"
#include "workload/engine_collective.h"

namespace orrery {

namespace {
constexpr uint32_t kNodeDone = 1;

// A GPU COMP node without num_ops but with a measured duration_micros (what
// converters of real traces write): the roofline leaves it its measured time.
bool Measured(const WorkNode& n) { return !n.has_num_ops && n.duration_micros > 0; }

// Collectives, sends and memory accesses take their stream's communication slot.
int SlotOf(const WorkNode& n) {
  switch (n.kind) {
    case NodeKind::kComp: return n.is_cpu ? kSlotCpu : kSlotGpu;
    case NodeKind::kColl:
    case NodeKind::kSend:
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: return kSlotComm + n.comm_stream;
    default: return kSlotNone;  // receives, metadata and invalid nodes take no slot
  }
}
}  // namespace

Executor::Executor(EventQueue* queue, CollectiveEngine* engine, MemoryBackend* memory, ComputeModel compute,
                   std::vector<NpuGraph> graphs, int iterations, CapacityOptions capacity, ExecutorHooks hooks)
    : queue_(queue),
      engine_(engine),
      compute_(compute),
      iterations_(iterations),
      memory_(queue, engine, memory,
              MemoryAccess::Options{compute.local_bytes_per_ns, compute.local_latency_ns, compute.pool_via_dim},
              static_cast<int>(graphs.size()), this, this, kNodeDone),
      capacity_(capacity),
      hooks_(hooks) {
  npus_.resize(graphs.size());
  for (size_t r = 0; r < graphs.size(); ++r) {
    npus_[r].graph = std::move(graphs[r]);
    NpuState& s = npus_[r];
    for (const WorkNode& n : s.graph.nodes) {
      s.num_slots = std::max(s.num_slots, static_cast<uint8_t>(kSlotComm + n.comm_stream + 1));
    }
    if (capacity_.enabled()) {
      if (Status st = capacity_.AddRank(static_cast<int>(r), s.graph, &s); !st.ok()) Fail(std::move(st));
    }
    ResetIteration(static_cast<int>(r), kNoNode);
  }
}

inline void Executor::Allocate(int rank, uint32_t idx, uint64_t bytes) {
  if (!capacity_.enabled()) return;
  NpuState& s = npus_[rank];
  if (Status st = capacity_.Allocate(rank, s.graph.nodes[idx], idx, bytes, queue_->Now(), &s); !st.ok()) {
    Fail(std::move(st));
  }
}

// `ended_by`: the recorder's index of the node that ended the previous
// iteration (kNoNode before the first).
void Executor::ResetIteration(int rank, uint32_t ended_by) {
  NpuState& s = npus_[rank];
  const size_t n = s.graph.nodes.size();
  if (hooks_.recorder && !hooks_.recorder->BeginIteration(rank, static_cast<uint32_t>(n))) {
    Fail(Status::Invalid("--critical-path: rank " + std::to_string(rank) + " runs " + std::to_string(n) + " nodes x " +
                         std::to_string(iterations_) +
                         " iterations, more than the 2^32 - 1 node records it can "
                         "keep; run fewer iterations"));
    return;
  }
  memory_.ResetIteration(rank, n);
  s.pending.resize(n);
  s.issued.assign(n, 0);
  s.start.assign(n, 0);
  s.done = 0;
  for (auto& q : s.ready) q = {};
  if (capacity_.enabled()) capacity_.ResetIteration(s.graph, &s);
  for (uint32_t i = 0; i < n; ++i) {
    s.pending[i] = s.graph.nodes[i].num_deps;
    if (s.pending[i] == 0)
      MakeReady(rank, i, ended_by, ended_by == kNoNode ? WaitedFor::kNothing : WaitedFor::kIteration);
  }
}

void Executor::MakeReady(int rank, uint32_t idx, uint32_t by, WaitedFor why) {
  NpuState& s = npus_[rank];
  if (hooks_.recorder) hooks_.recorder->Ready(rank, idx, queue_->Now(), by, why);
  s.ready[SlotOf(s.graph.nodes[idx])].push(idx);
}

Status Executor::Start() {
  if (Status st = CheckGroups(); !st.ok()) return st;
  for (size_t r = 0; r < npus_.size(); ++r) {
    if (npus_[r].graph.nodes.empty()) {
      npus_[r].finished = true;
      continue;
    }
    IssueReady(static_cast<int>(r));
    if (!failure_.ok()) return failure_;
  }
  return Status::Ok();
}

// Rule: ready nodes issue in ascending index order, each as soon as its slot
// is free: the next node is always the smallest ready node whose slot is free.
// O(slots) per issue: the rank's slots up to its highest communication stream.
// One loop per rank: a node that completes at once (metadata, zero-size
// compute) only makes its children ready, and this loop picks them up, so a
// chain of a million instant nodes needs no recursion. O(log n) per node.
void Executor::IssueReady(int rank) {
  NpuState& s = npus_[rank];
  if (s.issuing) return;  // the loop below, further up the stack, continues
  s.issuing = true;
  while (failure_.ok()) {
    int best = -1;
    for (int c = 0; c < s.num_slots; ++c) {
      if (!s.slot_busy[c] && !s.ready[c].empty() && (best < 0 || s.ready[c].top() < s.ready[best].top())) best = c;
    }
    if (best < 0) break;
    const uint32_t idx = s.ready[best].top();
    s.ready[best].pop();
    Issue(rank, idx);
  }
  s.issuing = false;
}

void Executor::ActiveUp(NpuState& s) {
  if (s.active++ == 0) s.active_since = queue_->Now();
  TrackStall(s);
}

void Executor::ActiveDown(NpuState& s) {
  if (--s.active == 0) s.busy += queue_->Now() - s.active_since;
  TrackStall(s);
}

// A memory stall: memory accesses in flight and nothing else (no GPU compute,
// no communication) active. Waiting on a peer: a receive posted whose send has
// not started, and nothing active at all (docs/report.md: the precedence).
void Executor::TrackStall(NpuState& s) {
  const bool stalled = s.mem_in_flight > 0 && s.active == s.mem_in_flight;
  if (stalled && !s.stalled) s.stall_since = queue_->Now();
  if (!stalled && s.stalled) s.mem_stall += queue_->Now() - s.stall_since;
  s.stalled = stalled;
  const bool waiting = s.recv_waiting > 0 && s.active == 0;
  if (waiting && !s.peer_waiting) s.wait_since = queue_->Now();
  if (!waiting && s.peer_waiting) s.peer_wait += queue_->Now() - s.wait_since;
  s.peer_waiting = waiting;
  const bool cpu = s.slot_busy[kSlotCpu] && s.active == 0 && !waiting;
  if (cpu && !s.cpu_exposed) s.cpu_since = queue_->Now();
  if (!cpu && s.cpu_exposed) s.cpu += queue_->Now() - s.cpu_since;
  s.cpu_exposed = cpu;
}

// A receive is posted: communication (in ASTRA-sim's comm time from now on),
// and active once its send has started. The match key is the engine's, so
// under rank classes a representative's receive pairs with the send that
// stands for its peer's.
void Executor::RecvBegin(int rank, const WorkNode& n) {
  NpuState& s = npus_[rank];
  if (s.comm_in_flight++ == 0) s.comm_since = queue_->Now();
  const auto [to, peer] = engine_->RecvMatchKey(rank, n.comm_src);
  if (p2p_started_.Post(n.comm_tag, static_cast<uint64_t>(to), peer, nullptr, 0)) {
    ActiveUp(s);  // its send started before: communication from the start
    return;
  }
  ++s.recv_waiting;
  TrackStall(s);
}

// A send starts: a receive of its key that waits (any of them: they are
// counted, not told apart) becomes communication; else it is remembered for the receive to come.
void Executor::SendStarted(int rank, const WorkNode& n) {
  const auto [to, peer] = engine_->SendMatchKey(rank, n.comm_dst);
  RecvClient* unused_client;
  uint64_t unused_cookie;
  if (!p2p_started_.Arrive(n.comm_tag, static_cast<uint64_t>(to), peer, &unused_client, &unused_cookie)) return;
  NpuState& r = npus_[to];
  --r.recv_waiting;
  ActiveUp(r);
}

void Executor::MemBegin(NpuState& s) {
  if (s.mem_in_flight++ == 0) s.mem_since = queue_->Now();
  ActiveUp(s);
}

void Executor::MemEnd(NpuState& s) {
  if (--s.mem_in_flight == 0) s.mem += queue_->Now() - s.mem_since;
  ActiveDown(s);
}

void Executor::CommBegin(NpuState& s) {
  if (s.comm_in_flight++ == 0) s.comm_since = queue_->Now();
  ActiveUp(s);
}

void Executor::CommEnd(NpuState& s) {
  if (--s.comm_in_flight == 0) s.comm += queue_->Now() - s.comm_since;
  ActiveDown(s);
}

void Executor::Fail(Status st) {
  if (failure_.ok()) failure_ = std::move(st);
}

void Executor::Issue(int rank, uint32_t idx) {
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  s.issued[idx] = 1;
  s.start[idx] = queue_->Now();
  if (hooks_.recorder) hooks_.recorder->Issued(rank, idx, SlotOf(n), queue_->Now());
  switch (n.kind) {
    case NodeKind::kComp: IssueCompute(rank, idx); return;
    case NodeKind::kColl: IssueCollective(rank, idx); return;
    case NodeKind::kSend:
      s.slot_busy[kSlotComm + n.comm_stream] = true;
      CommBegin(s);
      SendStarted(rank, n);
      engine_->SendP2P(rank, n.comm_dst, n.comm_size, n.comm_tag, this, Key(rank, idx));
      return;
    case NodeKind::kRecv:
      RecvBegin(rank, n);
      engine_->PostRecvP2P(rank, n.comm_src, n.comm_tag, this, Key(rank, idx));
      return;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: IssueMemory(rank, idx); return;
    case NodeKind::kMetadata:
    case NodeKind::kInvalid: Complete(rank, idx); return;
  }
}

inline void Executor::IssueCompute(int rank, uint32_t idx) {
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  if (compute_.roofline && !n.is_cpu && n.tensor_size == 0 && !Measured(n)) {
    // No tensor: done at once, holding the GPU for no time.
    s.slot_busy[kSlotGpu] = true;
    ActiveUp(s);
    Complete(rank, idx);
    return;
  }
  const std::optional<Tick> runtime = ComputeTime(rank, n);
  if (!runtime) return;
  if (n.is_cpu) {
    s.slot_busy[kSlotCpu] = true;
    TrackStall(s);
  } else {
    s.slot_busy[kSlotGpu] = true;
    s.compute += *runtime;
    ActiveUp(s);
    Allocate(rank, idx, n.output_bytes ? n.output_bytes : n.tensor_size);
  }
  queue_->ScheduleAfter(*runtime, this, kNodeDone, Key(rank, idx));
}

// A COMP node's run time: the roofline's for a GPU node when it is on, else
// the trace's duration. Nullopt, after failing the run, when the node would
// end past 2^64 ns.
inline std::optional<Tick> Executor::ComputeTime(int rank, const WorkNode& n) {
  if (compute_.roofline && !n.is_cpu && !Measured(n)) {
    // No work: ASTRA-sim divides 0 by 0 here (undefined); Orrery takes 1 ns, as for a
    // replayed COMP of duration 0 (README, "Input formats").
    if (n.num_ops == 0) return 1;
    const double oi = static_cast<double>(n.num_ops) / static_cast<double>(n.tensor_size);
    // A kernel's own efficiencies scale the two roofs (1 when the trace gives none: the same doubles).
    double peak = compute_.peak_flops_per_s * static_cast<double>(n.compute_efficiency);
    // Issued beside a collective of its rank: the collective's kernels hold a share of the SMs.
    if (compute_.collective_sm_fraction > 0 && npus_[rank].colls_in_flight > 0) {
      peak *= 1 - compute_.collective_sm_fraction;
    }
    const double perf = std::min(peak, compute_.mem_bytes_per_s * static_cast<double>(n.memory_efficiency) * oi);
    double ns = SecondsToNs(static_cast<double>(n.num_ops) / perf);
    if (compute_.heterogeneity) ns /= compute_.heterogeneity->ComputeSpeed(rank);
    const Tick runtime = TicksFromDouble(ns);
    if (runtime == kTickMax || runtime > kTickMax - queue_->Now()) {
      TimeOverflow(rank, n, "roofline COMP duration", ns);
      return std::nullopt;
    }
    return runtime;
  }
  Tick runtime = n.duration_micros == 0 ? 1 : SatMul(n.duration_micros, kNsPerUs);
  if (compute_.heterogeneity) {
    // A replayed duration at this NPU's speed (--heterogeneity), to whole ns.
    const double speed = compute_.heterogeneity->ComputeSpeed(rank);
    if (speed != 1.0) {
      const double ns = static_cast<double>(runtime) / speed;
      runtime = TicksFromDouble(ns);
      if (runtime == kTickMax || runtime > kTickMax - queue_->Now()) {
        TimeOverflow(rank, n, "COMP duration at its --heterogeneity speed", ns);
        return std::nullopt;
      }
    }
  }
  if (runtime == kTickMax || runtime > kTickMax - queue_->Now()) {
    TimeOverflow(rank, n, "COMP duration", UsToNs(static_cast<double>(n.duration_micros)));
    return std::nullopt;
  }
  return runtime;
}

void Executor::IssueCollective(int rank, uint32_t idx) {
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  s.slot_busy[kSlotComm + n.comm_stream] = true;
  CommBegin(s);
  ++s.colls_in_flight;
  static const std::vector<bool> kAllDims;  // empty: every dimension
  const std::vector<bool>& involved = n.involved >= 0 ? s.graph.involved[n.involved] : kAllDims;
  // The algorithm's text goes into a buffer kept between collectives (no
  // allocation per collective); taken, not borrowed, so an Issue nested
  // in the engine's call would simply start with a buffer of its own.
  std::string algo;
  algo.swap(algo_scratch_);
  // Before the engine starts it: the collective's first phase marks come from the call below.
  if (hooks_.recorder) hooks_.recorder->CollectiveIssued(rank, idx, n.group, n.comm_stream);
  const std::optional<RootedKind> rooted = ToRootedKind(n.collective);
  // No root given: the group's first rank (its ranks are sorted), rank 0 without a group.
  const int root = n.comm_root >= 0 ? n.comm_root : n.group >= 0 ? engine_->group(n.group).ranks.front() : 0;
  const Status st = rooted ? engine_->IssueRooted(rank, *rooted, n.comm_size, root, n.group, this, Key(rank, idx),
                                                  &algo, n.comm_stream)
                           : engine_->IssueCollective(rank, ToComType(n.collective).value_or(ComType::kAllReduce),
                                                      n.comm_size, involved, n.group, this, Key(rank, idx), &algo,
                                                      n.comm_stream);
  if (!st.ok()) {
    Fail(Status::Invalid(s.graph.path + ": node " + std::to_string(n.id) + " (rank " + std::to_string(rank) +
                         "): " + st.message()));
    return;
  }
  VLOG(1) << "t=" << queue_->Now() << " ns rank " << rank << ": issued " << CollectiveName(n.collective) << " node "
          << n.id << " (" << n.comm_size << " bytes, " << algo << ")";
  RecordCollective(rank, idx, algo);
  algo_scratch_.swap(algo);
}

// What the hooks and the report keep of a collective the engine has started.
void Executor::RecordCollective(int rank, uint32_t idx, const std::string& algorithm) {
  const WorkNode& n = npus_[rank].graph.nodes[idx];
  if (hooks_.observer) hooks_.observer->OnCollectiveIssued(rank, idx, algorithm, queue_->Now());
  if (hooks_.all_collectives) {
    auto [it, added] = algorithm_ids_.try_emplace(algorithm, static_cast<uint32_t>(algorithms_.size()));
    if (added) algorithms_.push_back(algorithm);
    npus_[rank].open_coll[n.comm_stream] = static_cast<uint32_t>(all_colls_.size());
    all_colls_.push_back(RankCollective{rank, idx, it->second, queue_->Now(), 0});
  }
  if (rank == 0) {
    rank0_colls_.push_back(
        CollectiveRecord{n.id, n.name, CollectiveName(n.collective), algorithm, n.comm_size, queue_->Now(), 0});
  }
}

inline void Executor::IssueMemory(int rank, uint32_t idx) {
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  s.slot_busy[kSlotComm + n.comm_stream] = true;  // MEM nodes share their stream's communication slot
  MemBegin(s);
  if (n.local_tier) {
    double end_ns = 0;
    if (!memory_.StartLocal(rank, n, Key(rank, idx), &end_ns)) {
      TimeOverflow(rank, n, "local memory access ending after", end_ns);
    }
    return;
  }
  if (n.kind == NodeKind::kMemLoad) Allocate(rank, idx, n.tensor_size);
  memory_.StartRemote(rank, n, Key(rank, idx));  // ends through HandleEvent(kNodeDone) or OnRecv
}

void Executor::HandleEvent(uint32_t kind, uint64_t arg) {
  const int rank = static_cast<int>(arg >> 32);
  const uint32_t idx = static_cast<uint32_t>(arg);
  if (memory_.ContinueAfterService(rank, idx, npus_[rank].graph.nodes[idx], arg)) return;
  Complete(rank, idx);
}

void Executor::OnCollectiveDone(uint64_t cookie) {
  const int rank = static_cast<int>(cookie >> 32);
  const WorkNode& n = npus_[rank].graph.nodes[static_cast<uint32_t>(cookie)];
  if (hooks_.all_collectives) all_colls_[npus_[rank].open_coll[n.comm_stream]].end = queue_->Now();
  if (rank == 0) {
    const uint64_t id = n.id;
    for (auto it = rank0_colls_.rbegin(); it != rank0_colls_.rend(); ++it) {
      if (it->node_id == id && it->end == 0) {
        it->end = queue_->Now();
        break;
      }
    }
  }
  Complete(rank, static_cast<uint32_t>(cookie));
}

void Executor::OnRecv(uint64_t cookie) {
  const int rank = static_cast<int>(cookie >> 32);
  const uint32_t idx = static_cast<uint32_t>(cookie);
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  if (memory_.ContinueAfterDelivery(rank, idx, n, cookie)) return;
  if (n.kind == NodeKind::kSend) {
    if (hooks_.recorder) hooks_.recorder->Delivered(rank, idx, queue_->Now());
    if (hooks_.observer) hooks_.observer->OnDelivered(rank, idx, s.start[idx], queue_->Now());
  } else if (n.kind == NodeKind::kRecv && hooks_.recorder) {
    // A receive completed by a message arriving now: the send delivered just
    // before, in the same event, is the one it matched.
    const NodeRecorder::Delivery& d = hooks_.recorder->last_delivery();
    if (d.at == queue_->Now() && d.rank == StandsFor(rank, n.comm_src) && d.rank >= 0) {
      const NpuState& sender = npus_[d.rank];
      const WorkNode& sn = sender.graph.nodes[d.flat % sender.graph.nodes.size()];
      if (StandsFor(d.rank, sn.comm_dst) == rank && sn.comm_tag == n.comm_tag) {
        hooks_.recorder->SetSender(rank, idx, d.rank, d.flat);
      }
    }
  }
  Complete(rank, idx);
}

// The simulated rank that stands for `peer` in a message between it and `rank`:
// the peer itself; with rank classes, `rank` for a member of its own class
// (the message is mirrored) or the representative of the peer's class.
int Executor::StandsFor(int rank, int peer) const {
  const RankClassMap* classes = engine_->rank_classes();
  if (!classes || peer < 0 || peer >= static_cast<int>(classes->class_of.size())) return peer;
  return classes->SameClass(rank, peer) ? rank : classes->RepOf(peer);
}

void Executor::Complete(int rank, uint32_t idx) {
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  EndActivity(rank, s, n);
  if (capacity_.enabled() && IsMemoryAccess(n.kind) && !n.local_tier) {
    if (Status st = capacity_.RemoteAccessDone(rank, n, queue_->Now()); !st.ok()) Fail(std::move(st));
  }
  s.issued[idx] = 2;
  ++s.done;
  if (hooks_.recorder) hooks_.recorder->Done(rank, idx, SlotOf(n), queue_->Now());
  if (hooks_.observer) hooks_.observer->OnNodeDone(rank, idx, s.start[idx], queue_->Now());
  const uint32_t flat = hooks_.recorder ? hooks_.recorder->Flat(rank, idx) : kNoNode;
  if (capacity_.enabled()) capacity_.NodeDone(n, idx, &s);
  for (uint32_t c = n.child_begin; c < n.child_end; ++c) {
    const uint32_t child = s.graph.children[c];
    if (--s.pending[child] == 0) MakeReady(rank, child, flat, WaitedFor::kDependency);
  }
  if (s.done == s.graph.nodes.size() && !NextIteration(rank, flat)) return;
  IssueReady(rank);
}

// The node's slot is free again and its share of the time categories ends.
inline void Executor::EndActivity(int rank, NpuState& s, const WorkNode& n) {
  switch (n.kind) {
    case NodeKind::kComp:
      if (n.is_cpu) {
        s.slot_busy[kSlotCpu] = false;
        TrackStall(s);
      } else {
        s.slot_busy[kSlotGpu] = false;
        ActiveDown(s);
      }
      break;
    case NodeKind::kColl:
      VLOG(1) << "t=" << queue_->Now() << " ns rank " << rank << ": finished " << CollectiveName(n.collective)
              << " node " << n.id;
      --s.colls_in_flight;
      [[fallthrough]];
    case NodeKind::kSend:
      s.slot_busy[kSlotComm + n.comm_stream] = false;
      CommEnd(s);
      break;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore:
      s.slot_busy[kSlotComm + n.comm_stream] = false;  // MEM nodes share their stream's communication slot
      MemEnd(s);
      break;
    case NodeKind::kRecv: CommEnd(s); break;
    default: break;
  }
}

// The rank has run its whole graph: the next iteration starts, or (false) the rank is finished.
bool Executor::NextIteration(int rank, uint32_t ended_by) {
  NpuState& s = npus_[rank];
  if (++s.iteration < iterations_) {
    ResetIteration(rank, ended_by);
    return true;
  }
  s.finished = true;
  s.finish = queue_->Now();
  return false;
}

}  // namespace orrery
