#include "workload/executor.h"

#include <algorithm>

#include "extern/et_io.h"

namespace orrery {

namespace {
constexpr uint32_t kNodeDone = 1;
}

Executor::Executor(EventQueue* queue, CollectiveEngine* engine, MemoryBackend* memory, ComputeModel compute,
                   std::vector<NpuGraph> graphs, int iterations, CapacityOptions capacity)
    : queue_(queue), engine_(engine), memory_(memory), compute_(compute), iterations_(iterations), capacity_(capacity) {
  npus_.resize(graphs.size());
  for (size_t r = 0; r < graphs.size(); ++r) {
    npus_[r].graph = std::move(graphs[r]);
    NpuState& s = npus_[r];
    if (capacity_.enabled()) {
      s.parents.resize(s.graph.nodes.size());
      for (uint32_t i = 0; i < s.graph.nodes.size(); ++i) {
        for (uint32_t c = s.graph.nodes[i].child_begin; c < s.graph.nodes[i].child_end; ++c) {
          s.parents[s.graph.children[c]].push_back(i);
        }
      }
      s.local_used = s.local_peak = capacity_.resident;
      if (capacity_.local_capacity > 0 && capacity_.resident > capacity_.local_capacity) {
        OverCapacity("rank " + std::to_string(r) + ": resident_bytes " + std::to_string(capacity_.resident) +
                     " exceed the local capacity of " + std::to_string(capacity_.local_capacity) + " bytes");
      }
    }
    ResetIteration(s);
  }
}

void Executor::OverCapacity(const std::string& what) {
  if (capacity_.allow_oversubscription) {
    if (warnings_.size() < 16) warnings_.push_back(what);
    return;
  }
  Fail(Status::Invalid("over capacity: " + what + " (--allow-oversubscription continues and reports the peak)"));
}

// Rule: a GPU COMP node's output (`output_bytes`, else `tensor_size`) and a
// MEM_LOAD's tensor occupy HBM from the node's start until all its children
// have finished.
void Executor::Allocate(int rank, uint32_t idx, uint64_t bytes) {
  NpuState& s = npus_[rank];
  if (!capacity_.enabled() || bytes == 0) return;
  s.allocated[idx] = bytes;
  s.local_used += bytes;
  s.local_peak = std::max(s.local_peak, s.local_used);
  if (capacity_.local_capacity > 0 && s.local_used > capacity_.local_capacity && !s.warned) {
    const WorkNode& n = s.graph.nodes[idx];
    s.warned = true;
    OverCapacity("rank " + std::to_string(rank) + ", node " + std::to_string(n.id) + " (" +
                 (n.name.empty() ? NodeTypeName(static_cast<int>(n.kind)) : n.name) + ") allocates " +
                 std::to_string(bytes) + " bytes at t=" + std::to_string(queue_->Now()) + " ns with " +
                 std::to_string(s.local_used - bytes) + " of " + std::to_string(capacity_.local_capacity) +
                 " local bytes in use: short by " + std::to_string(s.local_used - capacity_.local_capacity) + " bytes");
  }
}

void Executor::Release(NpuState& s, uint32_t idx) {
  if (s.allocated[idx] == 0) return;
  s.local_used -= s.allocated[idx];
  s.allocated[idx] = 0;
}

int Executor::PoolAttach(int rank) const {
  return engine_->topology().WithCoord(rank, compute_.pool_via_dim, 0);
}

bool Executor::OverNetwork(const WorkNode& n) const {
  return compute_.pool_via_dim >= 0 && !n.local_tier && (n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore);
}

void Executor::ResetIteration(NpuState& s) {
  const size_t n = s.graph.nodes.size();
  s.mem_stage.assign(n, 0);
  s.pending.resize(n);
  s.issued.assign(n, 0);
  s.start.assign(n, 0);
  s.done = 0;
  s.ready.clear();
  if (capacity_.enabled()) {
    s.allocated.assign(n, 0);
    s.live_children.resize(n);
    for (uint32_t i = 0; i < n; ++i) s.live_children[i] = s.graph.nodes[i].child_end - s.graph.nodes[i].child_begin;
  }
  for (uint32_t i = 0; i < n; ++i) {
    s.pending[i] = s.graph.nodes[i].num_deps;
    if (s.pending[i] == 0) s.ready.insert(i);
  }
}

Status Executor::Start() {
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

bool Executor::Available(const NpuState& s, const WorkNode& n) const {
  switch (n.kind) {
    case NodeKind::kComp: return n.is_cpu ? !s.cpu_busy : !s.gpu_busy;
    case NodeKind::kColl:
    case NodeKind::kSend:
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: return !s.comm_busy;
    default: return true;  // receives, metadata and invalid nodes take no slot
  }
}

void Executor::IssueReady(int rank) {
  NpuState& s = npus_[rank];
  std::vector<uint32_t> snapshot(s.ready.begin(), s.ready.end());
  for (uint32_t idx : snapshot) {
    if (!failure_.ok()) return;
    if (!s.ready.count(idx)) continue;
    if (!Available(s, s.graph.nodes[idx])) continue;
    s.ready.erase(idx);
    Issue(rank, idx);
  }
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
// no communication) active.
void Executor::TrackStall(NpuState& s) {
  const bool stalled = s.mem_in_flight > 0 && s.active == s.mem_in_flight;
  if (stalled && !s.stalled) s.stall_since = queue_->Now();
  if (!stalled && s.stalled) s.mem_stall += queue_->Now() - s.stall_since;
  s.stalled = stalled;
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
  switch (n.kind) {
    case NodeKind::kComp: {
      Tick runtime;
      if (compute_.roofline && !n.is_cpu) {
        if (n.tensor_size == 0) {
          Complete(rank, idx);
          return;
        }
        const double oi = static_cast<double>(n.num_ops) / static_cast<double>(n.tensor_size);
        const double perf = std::min(compute_.peak_flops_per_s, compute_.mem_bytes_per_s * oi);
        runtime = static_cast<Tick>(static_cast<double>(n.num_ops) / perf * 1e9);
      } else {
        runtime = n.duration_micros == 0 ? 1 : n.duration_micros * 1000;
      }
      if (n.is_cpu) {
        s.cpu_busy = true;
      } else {
        s.gpu_busy = true;
        s.compute += runtime;
        ActiveUp(s);
        Allocate(rank, idx, n.output_bytes ? n.output_bytes : n.tensor_size);
      }
      queue_->ScheduleAfter(runtime, this, kNodeDone, Key(rank, idx));
      return;
    }
    case NodeKind::kColl: {
      ComType t = ComType::kAllReduce;
      bool rooted = false;
      RootedKind rk = RootedKind::kBroadcast;
      switch (n.comm_type) {
        case 0: t = ComType::kAllReduce; break;
        case 2: t = ComType::kAllGather; break;
        case 6: t = ComType::kAllToAll; break;
        case 7:
        case 8: t = ComType::kReduceScatter; break;
        case 1: rooted = true; rk = RootedKind::kReduce; break;
        case 3: rooted = true; rk = RootedKind::kGather; break;
        case 4: rooted = true; rk = RootedKind::kScatter; break;
        case 5: rooted = true; rk = RootedKind::kBroadcast; break;
        case 9: rooted = true; rk = RootedKind::kBarrier; break;
      }
      s.comm_busy = true;
      CommBegin(s);
      std::vector<bool> involved;
      if (n.involved >= 0) involved = s.graph.involved[n.involved];
      std::string algo;
      Status st = rooted ? engine_->IssueRooted(rank, rk, n.comm_size, n.comm_root, n.group, this, Key(rank, idx), &algo)
                         : engine_->IssueCollective(rank, t, n.comm_size, involved, n.group, this, Key(rank, idx), &algo);
      if (!st.ok()) st = Status::Invalid(s.graph.path + ": node " + std::to_string(n.id) + " (rank " +
                                         std::to_string(rank) + "): " + st.message());
      if (!st.ok()) {
        Fail(st);
        return;
      }
      if (rank == 0) {
        rank0_colls_.push_back(CollectiveRecord{n.id, n.name, CollectiveName(n.comm_type), algo, n.comm_size,
                                                queue_->Now(), 0});
      }
      return;
    }
    case NodeKind::kSend:
      s.comm_busy = true;
      CommBegin(s);
      engine_->SendP2P(rank, n.comm_dst, n.comm_size, n.comm_tag, this, Key(rank, idx));
      return;
    case NodeKind::kRecv:
      CommBegin(s);
      engine_->PostRecvP2P(rank, n.comm_src, n.comm_tag, this, Key(rank, idx));
      return;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: {
      s.comm_busy = true;
      MemBegin(s);
      if (n.local_tier) {
        // HBM: latency + bytes / local-mem-bw, one access at a time per NPU.
        const Tick start = std::max(queue_->Now(), s.hbm_busy_until);
        s.hbm_busy_until = start + compute_.local_latency_ns +
                           static_cast<Tick>(static_cast<double>(n.tensor_size) / compute_.local_bytes_per_ns);
        queue_->ScheduleAt(s.hbm_busy_until, this, kNodeDone, Key(rank, idx));
        return;
      }
      if (n.kind == NodeKind::kMemLoad) Allocate(rank, idx, n.tensor_size);
      if (OverNetwork(n) && n.kind == NodeKind::kMemStore && PoolAttach(rank) != rank) {
        // First leg: carry the bytes to the NPU the pool hangs off.
        engine_->SendMessage(rank, PoolAttach(rank), n.tensor_size, CollectiveEngine::kRawTagBit, this, Key(rank, idx));
        return;
      }
      memory_->Access(rank, n.kind == NodeKind::kMemLoad ? MemOp::kLoad : MemOp::kStore, n.tensor_size,
                      Key(rank, idx));  // completes through HandleEvent(kNodeDone)
      return;
    }
    case NodeKind::kMetadata:
    case NodeKind::kInvalid: Complete(rank, idx); return;
  }
}

void Executor::HandleEvent(uint32_t kind, uint64_t arg) {
  const int rank = static_cast<int>(arg >> 32);
  const uint32_t idx = static_cast<uint32_t>(arg);
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  if (OverNetwork(n) && n.kind == NodeKind::kMemLoad && PoolAttach(rank) != rank && s.mem_stage[idx] == 0) {
    // The pool has served the load: carry the bytes back over the network.
    s.mem_stage[idx] = 1;
    engine_->SendMessage(PoolAttach(rank), rank, n.tensor_size, CollectiveEngine::kRawTagBit, this, arg);
    return;
  }
  Complete(rank, idx);
}

void Executor::OnCollectiveDone(uint64_t cookie) {
  const int rank = static_cast<int>(cookie >> 32);
  if (rank == 0) {
    const uint64_t id = npus_[0].graph.nodes[static_cast<uint32_t>(cookie)].id;
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
  if (OverNetwork(n) && n.kind == NodeKind::kMemStore && s.mem_stage[idx] == 0) {
    // The store's bytes reached the pool's NPU: now the pool serves it.
    s.mem_stage[idx] = 1;
    memory_->Access(rank, MemOp::kStore, n.tensor_size, cookie);
    return;
  }
  Complete(rank, idx);
}

void Executor::Complete(int rank, uint32_t idx) {
  NpuState& s = npus_[rank];
  const WorkNode& n = s.graph.nodes[idx];
  switch (n.kind) {
    case NodeKind::kComp:
      if (n.is_cpu) {
        s.cpu_busy = false;
      } else {
        s.gpu_busy = false;
        ActiveDown(s);
      }
      break;
    case NodeKind::kColl:
    case NodeKind::kSend:
      s.comm_busy = false;
      CommEnd(s);
      break;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore:
      s.comm_busy = false;  // MEM nodes share the communication slot
      MemEnd(s);
      if (capacity_.enabled() && !n.local_tier) {
        // Rule: a store puts its tensor in the remote tier, a load takes it back out.
        if (n.kind == NodeKind::kMemStore) {
          remote_used_ += n.tensor_size;
          remote_peak_ = std::max(remote_peak_, remote_used_);
          if (capacity_.remote_capacity > 0 && remote_used_ > capacity_.remote_capacity) {
            OverCapacity("rank " + std::to_string(rank) + ", node " + std::to_string(n.id) + " (" +
                         (n.name.empty() ? "MEM_STORE_NODE" : n.name) + ") stores " + std::to_string(n.tensor_size) +
                         " bytes at t=" + std::to_string(queue_->Now()) + " ns into a remote tier of " +
                         std::to_string(capacity_.remote_capacity) + " bytes: short by " +
                         std::to_string(remote_used_ - capacity_.remote_capacity) + " bytes");
          }
        } else {
          remote_used_ -= std::min(remote_used_, n.tensor_size);
        }
      }
      break;
    case NodeKind::kRecv: CommEnd(s); break;
    default: break;
  }
  s.issued[idx] = 2;
  ++s.done;
  if (capacity_.enabled()) {
    // A node's bytes are freed when its last child finishes (or at once, with no children).
    if (n.child_begin == n.child_end) Release(s, idx);
    for (uint32_t p : s.parents[idx]) {
      if (--s.live_children[p] == 0) Release(s, p);
    }
  }
  for (uint32_t c = n.child_begin; c < n.child_end; ++c) {
    const uint32_t child = s.graph.children[c];
    if (--s.pending[child] == 0) s.ready.insert(child);
  }
  if (s.done == s.graph.nodes.size()) {
    if (++s.iteration < iterations_) {
      ResetIteration(s);
    } else {
      s.finished = true;
      s.finish = queue_->Now();
      return;
    }
  }
  IssueReady(rank);
}

Status Executor::CheckFinished() const {
  if (!failure_.ok()) return failure_;
  std::string msg;
  int stuck = 0;
  for (size_t r = 0; r < npus_.size(); ++r) {
    const NpuState& s = npus_[r];
    if (s.finished) continue;
    if (++stuck > 8) continue;
    std::string waits;
    int shown = 0;
    for (uint32_t i = 0; i < s.graph.nodes.size() && shown < 4; ++i) {
      if (s.issued[i] != 1) continue;
      const WorkNode& n = s.graph.nodes[i];
      ++shown;
      waits += "; node " + std::to_string(n.id) + " (" + NodeTypeName(static_cast<int>(n.kind));
      if (n.kind == NodeKind::kRecv) {
        waits += " from rank " + std::to_string(n.comm_src) + ", tag " + std::to_string(n.comm_tag) + ", " +
                 std::to_string(n.comm_size) + " bytes; rank " + std::to_string(n.comm_src) + " never sends it";
      } else if (n.kind == NodeKind::kColl) {
        waits += std::string(" ") + CollectiveName(n.comm_type) + ", " + std::to_string(n.comm_size) +
                 " bytes; some rank in its group never issues it";
      }
      waits += ")";
    }
    msg += "\n  rank " + std::to_string(r) + ": " + std::to_string(s.graph.nodes.size() - s.done) +
           " node(s) unfinished" + waits;
  }
  if (stuck == 0) return Status::Ok();
  if (stuck > 8) msg += "\n  ... and " + std::to_string(stuck - 8) + " more rank(s)";
  // Which messages the collectives are still waiting for.
  std::vector<std::string> waits;
  for (int r = 0; r < engine_->npus() && waits.size() < 8; ++r) engine_->npu(r).DescribePending(&waits);
  for (size_t i = 0; i < waits.size() && i < 8; ++i) msg += "\n  " + waits[i];
  return Status::Invalid("deadlock at t=" + std::to_string(queue_->Now()) + " ns: " + std::to_string(stuck) +
                         " rank(s) cannot finish:" + msg);
}

}  // namespace orrery
