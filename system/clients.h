// The interfaces through which the system layer calls back up: a receive
// that completed, a chunk that changed phase, a collective that finished.
// The workload, the critical path and the timeline implement them.
#pragma once
#include <cstdint>

#include "core/tick.h"

namespace orrery {

// Something that waits for a message (a collective chunk or a P2P receive).
class RecvClient {
 public:
  virtual ~RecvClient() = default;
  virtual void OnRecv(uint64_t cookie) = 0;
};

// Hears each chunk of a collective move between phases (the critical
// path splits a collective's time by the dimensions it is on). `cookie` is the
// collective's; a dimension is a network dimension, kNoPhase (the chunk starts
// or ends) or kNotOneDim (a phase over a flat group, all NPUs, or a rooted graph).
class PhaseObserver {
 public:
  static constexpr int kNoPhase = -1;
  static constexpr int kNotOneDim = -2;
  virtual ~PhaseObserver() = default;
  virtual void OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) = 0;
};

class CollectiveDoneClient {
 public:
  virtual ~CollectiveDoneClient() = default;
  virtual void OnCollectiveDone(uint64_t cookie) = 0;
};

// A collective in flight on one NPU (ASTRA-sim's DataSet): its client hears
// when the last of its chunks ends.
struct CollectiveHandle {
  int total_chunks = 0;
  int finished_chunks = 0;
  CollectiveDoneClient* client = nullptr;
  uint64_t cookie = 0;
  // The communication stream it was issued on (the trace's comm_stream): its
  // chunks wait in that stream's queues (system/npu_sys.h).
  int stream = 0;
};

}  // namespace orrery
