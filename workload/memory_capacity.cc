#include "workload/memory_capacity.h"

#include <algorithm>

namespace orrery {

Status MemoryCapacity::OverCapacity(const std::string& what) {
  if (options_.allow_oversubscription) {
    if (warnings_.size() < 16) warnings_.push_back(what);
    return Status::Ok();
  }
  return Status::Invalid("over capacity: " + what + " (--allow-oversubscription continues and reports the peak)");
}

Status MemoryCapacity::AddRank(int rank, const NpuGraph& g, RankMemory* m) {
  const size_t count = g.nodes.size();
  const WorkNode* nodes = g.nodes.data();
  const uint32_t* children = g.children.data();
  m->parents.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t c = nodes[i].child_begin; c < nodes[i].child_end; ++c) m->parents[children[c]].push_back(i);
  }
  m->local_used = m->local_peak = options_.resident;
  if (options_.local_capacity > 0 && options_.resident > options_.local_capacity) {
    return OverCapacity("rank " + std::to_string(rank) + ": resident_bytes " + std::to_string(options_.resident) +
                        " exceed the local capacity of " + std::to_string(options_.local_capacity) + " bytes");
  }
  return Status::Ok();
}

void MemoryCapacity::ResetIteration(const NpuGraph& g, RankMemory* m) {
  const size_t n = g.nodes.size();
  m->allocated.assign(n, 0);
  m->live_children.resize(n);
  for (uint32_t i = 0; i < n; ++i) m->live_children[i] = g.nodes[i].child_end - g.nodes[i].child_begin;
}

Status MemoryCapacity::LocalShortage(int rank, const WorkNode& n, uint64_t bytes, Tick now, RankMemory* m) {
  m->warned = true;
  return OverCapacity("rank " + std::to_string(rank) + ", node " + std::to_string(n.id) + " (" +
                      (n.name.empty() ? NodeTypeName(n.kind) : n.name) + ") allocates " + std::to_string(bytes) +
                      " bytes at t=" + std::to_string(now) + " ns with " + std::to_string(m->local_used - bytes) +
                      " of " + std::to_string(options_.local_capacity) + " local bytes in use: short by " +
                      std::to_string(m->local_used - options_.local_capacity) + " bytes");
}

Status MemoryCapacity::RemoteShortage(int rank, const WorkNode& n, Tick now) {
  return OverCapacity("rank " + std::to_string(rank) + ", node " + std::to_string(n.id) + " (" +
                      (n.name.empty() ? "MEM_STORE_NODE" : n.name) + ") stores " + std::to_string(n.tensor_size) +
                      " bytes at t=" + std::to_string(now) + " ns into a remote tier of " +
                      std::to_string(options_.remote_capacity) + " bytes: short by " +
                      std::to_string(remote_used_ - options_.remote_capacity) + " bytes");
}

}  // namespace orrery
