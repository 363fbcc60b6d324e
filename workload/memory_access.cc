#include "workload/memory_access.h"

#include <algorithm>

namespace orrery {

MemoryAccess::MemoryAccess(EventQueue* queue, CollectiveEngine* engine, MemoryBackend* backend, Options options,
                           int npus, EventHandler* events, RecvClient* deliveries, uint32_t done_kind)
    : queue_(queue),
      engine_(engine),
      backend_(backend),
      options_(options),
      ranks_(npus),
      events_(events),
      deliveries_(deliveries),
      done_kind_(done_kind) {}

int MemoryAccess::PoolAttach(int rank) const { return engine_->topology().WithCoord(rank, options_.pool_via_dim, 0); }

bool MemoryAccess::StartLocal(int rank, const WorkNode& n, uint64_t key, double* end_ns) {
  Tick& busy_until = ranks_[rank].hbm_busy_until;
  const Tick start = std::max(queue_->Now(), busy_until);
  const double ns = static_cast<double>(n.tensor_size) / options_.local_bytes_per_ns;
  busy_until = SatAdd(SatAdd(start, options_.local_latency_ns), TicksFromDouble(ns));
  if (busy_until == kTickMax) {
    *end_ns = static_cast<double>(start) + static_cast<double>(options_.local_latency_ns) + ns;
    return false;
  }
  queue_->ScheduleAt(busy_until, events_, done_kind_, key);
  return true;
}

void MemoryAccess::StartRemote(int rank, const WorkNode& n, uint64_t key) {
  if (OverNetwork(n) && n.kind == NodeKind::kMemStore && PoolAttach(rank) != rank) {
    // First leg: carry the bytes to the NPU the pool hangs off.
    engine_->SendMessage(rank, PoolAttach(rank), n.tensor_size, CollectiveEngine::kRawTagBit, deliveries_, key);
    return;
  }
  backend_->Access(rank, n.kind == NodeKind::kMemLoad ? MemOp::kLoad : MemOp::kStore, n.tensor_size, key);
}

bool MemoryAccess::SendLoadBack(int rank, uint32_t idx, const WorkNode& n, uint64_t key) {
  uint8_t& leg = ranks_[rank].leg[idx];
  if (PoolAttach(rank) == rank || leg != 0) return false;
  leg = 1;
  engine_->SendMessage(PoolAttach(rank), rank, n.tensor_size, CollectiveEngine::kRawTagBit, deliveries_, key);
  return true;
}

bool MemoryAccess::ServeStoreAtPool(int rank, uint32_t idx, const WorkNode& n, uint64_t key) {
  uint8_t& leg = ranks_[rank].leg[idx];
  if (leg != 0) return false;
  leg = 1;
  backend_->Access(rank, MemOp::kStore, n.tensor_size, key);
  return true;
}

}  // namespace orrery
