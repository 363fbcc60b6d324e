// The base of a phase's collective algorithm on one NPU (the concrete ones:
// system/algorithms.cc) and the steps every algorithm is made of: a bundle
// (the memory-bus hop), a send, a receive, a timer, the phase's exit. The
// steps act through the algorithm's chunk (system/chunk.h), whose ChunkContext
// leads to the event queue and the transport (system/algorithm.cc).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "system/phase_spec.h"
#include "system/small_pool.h"

namespace orrery {

class Chunk;

class Algorithm : public Pooled {
 public:
  explicit Algorithm(Chunk* chunk) : chunk_(chunk) {}
  virtual ~Algorithm() = default;
  virtual void OnInit() = 0;             // the phase starts (its queue lets it run)
  virtual void OnBundleDone() = 0;       // a Bundle's hop (and reduction) is done
  virtual void OnPacketReceived() = 0;   // a posted Recv took its message
  virtual void OnTimer(uint64_t arg) {}  // a StartTimer's delay has passed

 protected:
  void StartTimer(uint64_t delay_ns, uint64_t arg);
  // The memory-bus hop before a send (NPU to MA) or after a receive (MA to
  // NPU): endpoint-delay ns, plus the reduction cost when `processed`.
  void Bundle(uint64_t bytes, bool processed);
  void Send(int dst, uint64_t bytes);
  void Recv(int src, uint64_t bytes);
  void Exit();
  int rank() const;  // inline, in system/chunk.h

 private:
  // Send's every case; Send itself takes the common one inline.
  __attribute__((noinline)) void SendGeneral(int dst, uint64_t bytes);
  // Recv when the transport redirects messages (symmetric runs, rank classes).
  __attribute__((noinline)) void RecvRedirected(int src, uint64_t bytes);

 protected:
  Chunk* chunk_;
};

// The phase's algorithm, in `arena`'s slot for the chunk's rank when it fits
// (system/rank_arena.h; null: the pool).
std::unique_ptr<Algorithm> MakeAlgorithm(Chunk* chunk, const PhaseSpec& spec, RankArena* arena);
// The size of the built-in packet algorithms (ring, halving-doubling,
// direct): the slot of the algorithms' rank arena.
inline constexpr size_t kAlgorithmSlotBytes = 192;

}  // namespace orrery
