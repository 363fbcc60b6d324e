// What a collective's chunks, their algorithms and their NPU's system layer
// need from the world, in one place: the clock, the options, the network's
// shape, the way out to the network (MessageTransport) and where chunks live
// (ChunkStore). The engine fills one ChunkContext and hands it down; nothing
// below the engine sees the engine (docs/design.md, "The one-way rule").
#pragma once
#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "core/tick.h"
#include "system/options.h"

namespace orrery {

class MessageTransport;
class PhaseObserver;
class ChunkStore;
class Topology;

struct ChunkContext {
  // First, in one cache line: what every event and message of a chunk reads.
  EventQueue* queue = nullptr;
  ChunkStore* store = nullptr;            // chunk and algorithm lifetime, the chunk directory
  MessageTransport* transport = nullptr;  // messages to the network backend
  uint64_t endpoint_delay_ns = 0;         // options->endpoint_delay_ns
  double local_mem_bw = 0;                // options->local_mem_bw (bytes per ns; 0: no reduction cost)
  const SystemOptions* options = nullptr;
  const Topology* topology = nullptr;
  const std::vector<PhaseObserver*>* phase_observers = nullptr;

  // The cost of reducing `bytes` on an NPU: two reads and one write of the
  // message through local memory. The last size's cost is kept: a
  // collective's messages mostly repeat their size (and a division is slow).
  // The key is the size alone: local_mem_bw is set once, when the engine
  // fills its context, before any chunk runs.
  Tick ReduceCost(uint64_t bytes) const {
    if (bytes != reduce_bytes_) {
      reduce_bytes_ = bytes;
      reduce_cost_ = local_mem_bw <= 0 ? 0 : SatMul(3, TicksFromDouble(static_cast<double>(bytes) / local_mem_bw));
    }
    return reduce_cost_;
  }

 private:
  mutable uint64_t reduce_bytes_ = 0;
  mutable Tick reduce_cost_ = 0;  // ReduceCost(reduce_bytes_): 0 bytes cost 0
};

}  // namespace orrery
