// Where a collective's chunks live: it owns every live chunk (so a run that
// stops early frees them too), keeps the retired chunks and algorithms until
// the next top-level event (an algorithm may retire itself while its code is
// still on the stack), and holds the ChunkDirectory through which the engine
// delivers a built-in algorithm's messages straight to the receiving chunk.
// NpuSys puts chunks in and takes them out; the engine only looks chunks up.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/status.h"
#include "system/chunk.h"
#include "system/chunk_directory.h"
#include "system/comm_group.h"
#include "system/rank_arena.h"
#include "system/tag.h"

namespace orrery {

class ChunkStore {
 public:
  // The directory serves the full engine; symmetric and rank-class runs keep
  // every message on the match tables (a mirrored message has no real sender).
  void set_directory_on(bool on) { directory_on_ = on; }
  bool directory_on() const { return directory_on_; }
  ChunkDirectory& directory() { return directory_; }
  // The communicator groups that collective tags name (the engine's list).
  void set_groups(const std::vector<CommGroup>* groups) { groups_ = groups; }

  // `rank`'s position in the group of a collective chunk's tag (its rank
  // when the tag names no group): its index in the directory.
  int PositionOf(uint64_t tag, int rank) const {
    const int g = tags::ChunkGroup(tag);
    if (g < 0) return rank;
    const std::vector<int>& m = (*groups_)[g].ranks;
    return static_cast<int>(std::lower_bound(m.begin(), m.end(), rank) - m.begin());
  }
  // `rank`'s chunk for `tag` when it takes a built-in algorithm's messages
  // through its Mailbox (registered when its collective started on that
  // rank), or nullptr (not started yet, ended, or no directory).
  Chunk* Receiver(uint64_t tag, int rank) {
    return directory_on_ ? directory_.Find(tag, PositionOf(tag, rank)) : nullptr;
  }

  // Chunks and algorithms placed by rank (system/rank_arena.h) for ranks
  // [0, ranks); without this call, or with 0 (before any chunk exists),
  // they come from the pool.
  void PlaceByRank(int ranks) {
    chunk_arena_.reset();
    algorithm_arena_.reset();  // checks that no object is left in it
    if (ranks <= 0) return;
    chunk_arena_ = std::make_unique<RankArena>(sizeof(Chunk), ranks);
    algorithm_arena_ = std::make_unique<RankArena>(kAlgorithmSlotBytes, ranks);
  }
  RankArena* chunk_arena() { return chunk_arena_.get(); }
  RankArena* algorithm_arena() { return algorithm_arena_.get(); }

  // Takes a new chunk.
  Chunk* Keep(std::unique_ptr<Chunk> s) {
    ORRERY_CHECK(live_.size() < UINT32_MAX, "more than 2^32 - 1 live streams");  // store_slot_ is 32 bits
    Chunk* raw = s.get();
    raw->store_slot_ = static_cast<uint32_t>(live_.size());
    live_.push_back(std::move(s));
    return raw;
  }
  // When the directory is on and the chunk's algorithms all receive through
  // its Mailbox: registers it and turns the Mailbox on (true: the caller then
  // moves the messages that came early into it, before the chunk posts any).
  bool Register(Chunk* s) {
    if (!directory_on_ || !s->MailboxEligible()) return false;
    directory_.Register(s->tag_, s->group_pos_, s);
    s->mail_.TurnOn();
    return true;
  }
  // The chunk has ended: out of the directory, freed at the next CollectGarbage.
  void Release(Chunk* s) {
    const size_t i = s->store_slot_;
    ORRERY_CHECK(i < live_.size() && live_[i].get() == s, "stream released twice");
    if (s->mail_.on()) directory_.Unregister(s->tag_, s->group_pos_);
    dead_chunks_.push_back(std::move(live_[i]));
    garbage_ = true;
    if (i + 1 != live_.size()) {
      live_[i] = std::move(live_.back());
      live_[i]->store_slot_ = static_cast<uint32_t>(i);
    }
    live_.pop_back();
  }
  void Retire(std::unique_ptr<Algorithm> a) {
    dead_algos_.push_back(std::move(a));
    garbage_ = true;
  }
  // At the start of every chunk event the queue hands over (no algorithm code
  // is on the stack; relays, core/event_queue.h, run none, so a free may wait
  // one event more): inline, since there is usually nothing to free.
  void CollectGarbage() {
    if (garbage_) FreeRetired();
  }
  bool has_garbage() const { return garbage_; }
  // An empty phase list for a new chunk: an ended chunk's, its capacity
  // kept, so planning a collective allocates no phase lists in steady state.
  std::vector<PhaseSpec> TakePhaseList() {
    if (spare_phases_.empty()) return {};
    std::vector<PhaseSpec> v = std::move(spare_phases_.back());
    spare_phases_.pop_back();
    return v;
  }

 private:
  static constexpr size_t kSparePhaseLists = 4096;  // enough for every chunk that ends in one event
  __attribute__((noinline)) void FreeRetired() {
    garbage_ = false;
    dead_algos_.clear();
    for (std::unique_ptr<Chunk>& s : dead_chunks_) KeepPhaseList(std::move(s->phases_));
    dead_chunks_.clear();
  }
  void KeepPhaseList(std::vector<PhaseSpec> v) {
    if (spare_phases_.size() >= kSparePhaseLists || v.capacity() == 0) return;
    v.clear();
    spare_phases_.push_back(std::move(v));
  }
  // First: destroyed after the chunks and algorithms that live in them.
  std::unique_ptr<RankArena> chunk_arena_;
  std::unique_ptr<RankArena> algorithm_arena_;
  bool directory_on_ = true;
  const std::vector<CommGroup>* groups_ = nullptr;
  std::vector<std::vector<PhaseSpec>> spare_phases_;
  ChunkDirectory directory_;
  bool garbage_ = false;  // dead_algos_ or dead_chunks_ holds something
  std::vector<std::unique_ptr<Algorithm>> dead_algos_;
  std::vector<std::unique_ptr<Chunk>> dead_chunks_;
  std::vector<std::unique_ptr<Chunk>> live_;
};

}  // namespace orrery
