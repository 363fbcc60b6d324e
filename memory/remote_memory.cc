#include "memory/remote_memory.h"

#include <algorithm>

namespace orrery {

RemoteMemory::RemoteMemory(RemoteMemoryOptions options, int npus) : options_(options) {
  switch (options_.mode) {
    case RemoteMemoryKind::kPool: busy_until_.assign(1, 0); break;
    case RemoteMemoryKind::kPerNode:
      busy_until_.assign((npus + options_.npus_per_node - 1) / std::max(1, options_.npus_per_node), 0);
      break;
    default: break;
  }
}

Tick RemoteMemory::ServiceTime(uint64_t bytes) const {
  return SatAdd(options_.latency_ns, TicksFromDouble(static_cast<double>(bytes) / options_.bytes_per_ns));
}

Tick RemoteMemory::Access(int npu, uint64_t bytes, Tick now) {
  const Tick service = ServiceTime(bytes);
  switch (options_.mode) {
    case RemoteMemoryKind::kPerNpu: return SatAdd(now, service);
    case RemoteMemoryKind::kPool: {
      Tick& busy = busy_until_[0];
      busy = SatAdd(std::max(busy, now), service);
      return busy;
    }
    case RemoteMemoryKind::kPerNode: {
      Tick& busy = busy_until_[npu / options_.npus_per_node];
      busy = SatAdd(std::max(busy, now), service);
      return busy;
    }
    case RemoteMemoryKind::kNone: break;
  }
  return now;
}

}  // namespace orrery
