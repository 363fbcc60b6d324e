// The remote (disaggregated) memory tier as ASTRA-sim models it: an access of
// B bytes costs latency + floor(B / bandwidth) ns. PER_NPU memories never
// contend; PER_NODE and POOL are first-in-first-out servers shared by the NPUs
// of a node or by all NPUs.
#pragma once
#include <cstdint>
#include <vector>

#include "core/remote_memory_kind.h"
#include "core/status.h"
#include "core/tick.h"

namespace orrery {

struct RemoteMemoryOptions {
  RemoteMemoryKind mode = RemoteMemoryKind::kNone;
  uint64_t latency_ns = 0;
  double bytes_per_ns = 0;
  int npus_per_node = 1;
};

class RemoteMemory {
 public:
  RemoteMemory(RemoteMemoryOptions options, int npus);
  bool enabled() const { return options_.mode != RemoteMemoryKind::kNone; }
  // Completion time of an access issued at `now`.
  Tick Access(int npu, uint64_t bytes, Tick now);
  Tick ServiceTime(uint64_t bytes) const;
  const RemoteMemoryOptions& options() const { return options_; }

 private:
  RemoteMemoryOptions options_;
  std::vector<Tick> busy_until_;  // one per server
};

}  // namespace orrery
