// How a MEM node reaches its bytes and when its access ends:
//   local tier (memory_tier: local)  HBM, one access at a time per NPU:
//                                    latency + bytes / local-mem-bw
//   remote tier                      the memory backend (MemoryBackend::Access);
//                                    with a pool dimension, the pool hangs off
//                                    the NPU at coordinate 0 on it and the bytes
//                                    cross the network: a store's to that NPU
//                                    first, a load's back after the pool served it
// The owner (the executor) hears each end as an event of its done kind (HBM,
// the backend) or as a delivery (OnRecv, the network legs), and asks here
// whether the access goes on: a few branches per node, no allocation.
#pragma once
#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "memory/backend.h"
#include "system/collective_engine.h"
#include "workload/graph.h"

namespace orrery {

class MemoryAccess {
 public:
  struct Options {
    double local_bytes_per_ns = 0;  // local-mem-bw
    Tick local_latency_ns = 0;
    int pool_via_dim = -1;  // the network dimension remote traffic crosses (-1: none)
  };
  // `events` hears HandleEvent(done_kind, key), `deliveries` OnRecv(key).
  MemoryAccess(EventQueue* queue, CollectiveEngine* engine, MemoryBackend* backend, Options options, int npus,
               EventHandler* events, RecvClient* deliveries, uint32_t done_kind);

  // Each iteration: every MEM node of the rank starts at its first leg.
  void ResetIteration(int rank, size_t nodes) { ranks_[rank].leg.assign(nodes, 0); }
  // A local-tier access. False when it would end past 2^64 ns (*end_ns: when).
  bool StartLocal(int rank, const WorkNode& n, uint64_t key, double* end_ns);
  // A remote-tier access: the backend, or a pool store's first leg over the network.
  void StartRemote(int rank, const WorkNode& n, uint64_t key);
  // The backend served node `idx`: true when the access goes on (a pool load's
  // bytes now cross the network back).
  bool ContinueAfterService(int rank, uint32_t idx, const WorkNode& n, uint64_t key) {
    return n.kind == NodeKind::kMemLoad && OverNetwork(n) && SendLoadBack(rank, idx, n, key);
  }
  // A delivery for node `idx`: true when the access goes on (a store's bytes
  // reached the pool's NPU, which serves it now).
  bool ContinueAfterDelivery(int rank, uint32_t idx, const WorkNode& n, uint64_t key) {
    return n.kind == NodeKind::kMemStore && OverNetwork(n) && ServeStoreAtPool(rank, idx, n, key);
  }

 private:
  struct RankState {
    Tick hbm_busy_until = 0;
    std::vector<uint8_t> leg;  // pool-over-network accesses: 0 first leg, 1 second leg
  };
  bool OverNetwork(const WorkNode& n) const { return options_.pool_via_dim >= 0 && !n.local_tier; }
  int PoolAttach(int rank) const;
  bool SendLoadBack(int rank, uint32_t idx, const WorkNode& n, uint64_t key);
  bool ServeStoreAtPool(int rank, uint32_t idx, const WorkNode& n, uint64_t key);

  EventQueue* queue_;
  CollectiveEngine* engine_;
  MemoryBackend* backend_;
  Options options_;
  std::vector<RankState> ranks_;
  EventHandler* events_;
  RecvClient* deliveries_;
  uint32_t done_kind_;
};

}  // namespace orrery
