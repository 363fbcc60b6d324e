// The per-NPU system layer: one queue per network dimension, where at most
// `active-chunks-per-dimension` chunks (system/chunk.h) run their phase at
// once and the others wait in ASTRA-sim's order, and the matching of message
// sends with receives. Everything it needs from the world comes through a
// ChunkContext (system/chunk_context.h); it never sees the engine that plans
// the collectives.
#pragma once
#include <cstdint>
#include <list>
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
  void InsertChunk(std::list<Chunk*>* queue, Chunk* s);
  void NotifyChunkAdded(int q);
  void NotifyChunkRemoved(int q);
  void StartWaiting(int q);
  void SweepMatches();
  void EraseFromQueue(int q, Chunk* s);

  const ChunkContext* ctx_;
  int rank_;
  int priority_counter_ = 0;
  std::vector<std::list<Chunk*>> active_;
  std::vector<int> running_;
  std::vector<uint8_t> mixed_;  // per queue: a waiting chunk was placed by size (SmallestFirst)
  MatchTable match_;
  std::vector<std::pair<int, uint32_t>> early_;  // scratch for TakeEarlyArrivals
};

}  // namespace orrery
