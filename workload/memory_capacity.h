// Memory capacity tracking: how many bytes each NPU holds in its local tier
// (HBM) and all NPUs in the remote tier, against the configured capacities.
// Rules: a GPU COMP node's output (`output_bytes`, else `tensor_size`) and a
// remote MEM_LOAD's tensor occupy HBM from the node's start until all its
// children have finished; a remote MEM_STORE puts its tensor in the remote
// tier, a remote MEM_LOAD takes it back out. Over a capacity is an error, or
// with allow_oversubscription a warning (the first 16) and the peak. Off, at
// no cost beyond a test per node, when nothing is configured.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tick.h"
#include "workload/graph.h"

namespace orrery {

// Off when local_capacity, remote_capacity and resident are all 0.
struct CapacityOptions {
  uint64_t local_capacity = 0;   // HBM bytes per NPU (0: unlimited)
  uint64_t remote_capacity = 0;  // bytes of the remote tier, shared by all NPUs (0: unlimited)
  uint64_t resident = 0;         // bytes every NPU holds in HBM from the start
  bool allow_oversubscription = false;
  bool enabled() const { return local_capacity > 0 || remote_capacity > 0 || resident > 0; }
};

// One NPU's share: a base of Executor::NpuState, whose local_peak the report reads.
struct RankMemory {
  uint64_t local_used = 0, local_peak = 0;
  std::vector<uint64_t> allocated;      // bytes each node holds in HBM
  std::vector<uint32_t> live_children;  // children not finished yet (frees the node's bytes at 0)
  std::vector<std::vector<uint32_t>> parents;
  bool warned = false;  // the rank's first local shortage is reported, not every one
};

// Every call that can go over a capacity returns the error, or Ok (with a
// warning kept) when oversubscription is allowed. Call only when enabled().
// The calls made per node are inline: their common case is a few additions.
class MemoryCapacity {
 public:
  explicit MemoryCapacity(CapacityOptions options) : options_(options) {}
  bool enabled() const { return options_.enabled(); }

  // Before the run: the rank's nodes' parents and its resident bytes.
  Status AddRank(int rank, const NpuGraph& g, RankMemory* m);
  void ResetIteration(const NpuGraph& g, RankMemory* m);
  // Node `idx` starts holding `bytes` of HBM (at `now`, for the message).
  Status Allocate(int rank, const WorkNode& n, uint32_t idx, uint64_t bytes, Tick now, RankMemory* m) {
    if (bytes == 0) return Status::Ok();
    m->allocated[idx] = bytes;
    m->local_used += bytes;
    m->local_peak = std::max(m->local_peak, m->local_used);
    if (options_.local_capacity == 0 || m->local_used <= options_.local_capacity || m->warned) return Status::Ok();
    return LocalShortage(rank, n, bytes, now, m);
  }
  // A remote-tier MEM node ended: a store fills the remote tier, a load empties it.
  Status RemoteAccessDone(int rank, const WorkNode& n, Tick now) {
    if (n.kind != NodeKind::kMemStore) {
      remote_used_ -= std::min(remote_used_, n.tensor_size);
      return Status::Ok();
    }
    remote_used_ += n.tensor_size;
    remote_peak_ = std::max(remote_peak_, remote_used_);
    if (options_.remote_capacity == 0 || remote_used_ <= options_.remote_capacity) return Status::Ok();
    return RemoteShortage(rank, n, now);
  }
  // Node `idx` ended: its bytes are freed when it has no children, and each
  // parent's when this was the parent's last child to finish.
  void NodeDone(const WorkNode& n, uint32_t idx, RankMemory* m) {
    if (n.child_begin == n.child_end) Release(m, idx);
    for (uint32_t p : m->parents[idx]) {
      if (--m->live_children[p] == 0) Release(m, p);
    }
  }

  uint64_t remote_peak() const { return remote_peak_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Status OverCapacity(const std::string& what);
  Status LocalShortage(int rank, const WorkNode& n, uint64_t bytes, Tick now, RankMemory* m);
  Status RemoteShortage(int rank, const WorkNode& n, Tick now);
  static void Release(RankMemory* m, uint32_t idx) {
    if (m->allocated[idx] == 0) return;
    m->local_used -= m->allocated[idx];
    m->allocated[idx] = 0;
  }

  CapacityOptions options_;
  uint64_t remote_used_ = 0, remote_peak_ = 0;
  std::vector<std::string> warnings_;
};

}  // namespace orrery
