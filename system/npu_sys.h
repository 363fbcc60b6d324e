// The per-NPU system layer: one queue per network dimension and
// communication stream, where at most `active-chunks-per-dimension` chunks
// (system/chunk.h) run their phase at once and the others wait in ASTRA-sim's
// order, and the matching of message sends with receives.
//
// Streams: a collective issued on communication stream k (the trace's
// comm_stream, docs/formats.md) waits in stream k's queues only. Stream 0 is
// ASTRA-sim's single set of queues; a generated workload puts each
// communicator kind on its own stream, and its collectives then never wait
// for another kind's chunk to finish (as NCCL runs collectives of different
// communicators side by side). Sharing one set of queues across streams is
// not only slower but unsound: when ranks get out of step (a slow rank), two
// groups' collectives can start in opposite orders on two ranks, each
// holding the slot the other's waits for — a deadlock no real run has.
//
// Everything it needs from the world comes through a ChunkContext
// (system/chunk_context.h); it never sees the engine that plans the
// collectives.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "system/chunk_context.h"
#include "system/clients.h"
#include "system/match_table.h"
#include "system/phase_spec.h"

namespace orrery {

class Chunk;

class NpuSys {
 public:
  NpuSys(const ChunkContext* ctx, int rank, int num_queues);
  int rank() const { return rank_; }
  const ChunkContext* context() const { return ctx_; }

  // Splits a collective into chunks and schedules them. Each chunk
  // is tagged tags::Chunk(group, (*chunk_counter)++); `group_pos` is this
  // rank's position in the group (its rank when group < 0).
  void StartCollective(CollectiveHandle* coll, std::vector<std::vector<PhaseSpec>> chunks, int group, int group_pos,
                       uint64_t* chunk_counter);
  void ProceedToNextPhase(Chunk* s);

  // Message matching, keyed by (source, tag, sub) (system/tag.h).
  void PostRecv(int src, uint64_t tag, uint64_t sub, RecvClient* client, uint64_t cookie);
  void OnArrival(int src, uint64_t tag, uint64_t sub);
  void DescribePending(std::vector<std::string>* out) const;
  // Point-to-point messages that arrived but no receive ever took.
  void DescribeUnmatched(std::vector<std::string>* out) const;

 private:
  // A chunk that enters the ChunkDirectory takes the messages for `tag`
  // (sub 0) that arrived before it started.
  void TakeEarlyArrivals(uint64_t tag, Mailbox* mail);
  // Places a chunk whose phase waits in its queue, by ASTRA-sim's
  // intra-dimension scheduling: by size (SmallestFirst) or by priority.
  void Enqueue(std::list<Chunk*>* queue, Chunk* s);
  void EnqueueBySize(std::list<Chunk*>* queue, Chunk* s);
  void EnqueueByPriority(std::list<Chunk*>* queue, Chunk* s, bool by_size);
  // Starts queue q's first waiting chunks while fewer than
  // active-chunks-per-dimension run.
  void StartWaitingChunks(int q);
  // A running chunk left queue q: the next waiting one may start.
  void LeaveRunning(int q);
  void EraseFromQueue(int q, Chunk* s);
  // The chunk's last phase ended (`previous`: its queue): it leaves its
  // queue and the store, and its collective may be done.
  void EndChunk(Chunk* s, int previous);
  void TellPhaseObservers(const Chunk* s, int to_dim);
  void SweepMatches();

  const ChunkContext* ctx_;
  int rank_;
  int next_priority_ = 0;  // the next collective's (LIFO: rising, so later ones go first; else falling)
  // The queue of a phase on queue `id` of stream `stream` (made when first used).
  int QueueOf(int stream, int id);
  int num_dims_queues_;  // queues per stream
  // Queue q (stream-major: stream q / num_dims_queues_, dimension q %
  // num_dims_queues_): its running chunks first, then the waiting ones.
  std::list<Chunk*>& Queue(int q) {
    return streams_[static_cast<size_t>(q) / num_dims_queues_][static_cast<size_t>(q) % num_dims_queues_];
  }
  // One array of num_dims_queues_ queues per stream, made when the stream is
  // first used (a trace run has stream 0 only: about 100 bytes an NPU, where a
  // deque of queues took about 650). The arrays never move: a stream's first
  // collective may add one while StartWaitingChunks walks a queue (a chunk's
  // start can end a collective, whose client issues the next), and that
  // walk's iterator stays valid.
  std::vector<std::unique_ptr<std::list<Chunk*>[]>> streams_;
  std::vector<int> running_;             // per queue: how many of its first chunks run
  std::vector<uint8_t> placed_by_size_;  // per queue: a waiting chunk was placed by size (SmallestFirst)
  MatchTable match_;
  std::vector<std::pair<int, uint32_t>> early_arrivals_;  // scratch for TakeEarlyArrivals
};

}  // namespace orrery
