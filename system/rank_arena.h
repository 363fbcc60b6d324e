// Rank-major memory for the per-rank objects the event loop visits in rank
// order: a collective's chunks and their phase algorithms. At one instant of
// a data-parallel step every rank handles its own chunk, and the queue runs
// those events in rank order (ranks r, r+1, ... as the schedule was built).
// From a free list the objects lie scattered, so at 16K NPUs each event is a
// cold miss at a random address; here slot k of every rank sits in one plane,
// rank r at plane_k + r * slot, so the events of one instant walk memory
// upwards (the hardware prefetchers and the DRAM pages help) and the working
// set is only the planes in use.
//
// A rank takes its lowest free plane, so ranks that run the same schedule put
// the same chunk in the same plane. Objects larger than a slot, and ranks
// whose planes are all taken, fall back to the SmallPool: placement changes
// addresses, never results. The planes are one reservation of address space
// (pages are committed when first touched).
//
// Frees arrive through Pooled's operator delete, which knows only the pointer:
// live arenas are in a process-wide registry that SmallPool::Free asks first
// (a sweep runs simulations, and so arenas, on several threads). An arena's
// own slots are taken and given back on the thread that runs its simulation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery {

class RankArena {
 public:
  static constexpr int kPlanes = 32;  // slots per rank (a bit each)

  // Slots of at least `object_bytes` (rounded to whole cache lines, and to an
  // odd number of them so that neighbouring ranks' first lines spread over
  // the cache's sets) for ranks [0, ranks).
  RankArena(size_t object_bytes, int ranks);
  ~RankArena();
  RankArena(const RankArena&) = delete;
  RankArena& operator=(const RankArena&) = delete;

  // Memory for an object of `bytes` owned by `rank`, or nullptr: the object
  // does not fit a slot, the rank has no free plane, or no address space.
  void* Take(size_t bytes, int rank);
  // Returns `p` to the live arena that holds it: false when none does.
  static bool GiveBack(void* p);

  size_t slot_bytes() const { return slot_; }
  // Slots taken now (tests).
  size_t taken() const { return taken_; }
  // Since the process started, over every arena (tests): slots handed out,
  // and requests refused because the rank had every plane taken.
  static uint64_t SlotsTakenEver();
  static uint64_t RanksFullEver();

 private:
  bool Owns(const void* p) const { return p >= base_ && p < base_ + bytes_; }
  void Give(void* p);

  char* base_ = nullptr;
  size_t bytes_ = 0;
  size_t slot_ = 0;
  size_t plane_ = 0;            // bytes of one plane: ranks * slot
  std::vector<uint32_t> used_;  // per rank: bit k = plane k's slot is taken
  size_t taken_ = 0;
};

}  // namespace orrery
