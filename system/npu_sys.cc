#include "system/npu_sys.h"

#include <algorithm>
#include <string>

#include "core/status.h"
#include "system/chunk.h"
#include "system/chunk_store.h"
#include "system/tag.h"

namespace orrery {

NpuSys::NpuSys(const ChunkContext* ctx, int rank, int num_queues)
    : ctx_(ctx), rank_(rank), active_(num_queues), running_(num_queues, 0), mixed_(num_queues, 0) {}

void NpuSys::StartCollective(CollectiveHandle* coll, std::vector<std::vector<PhaseSpec>> chunks, int group,
                             int group_pos, uint64_t* chunk_counter) {
  const int priority = ctx_->options->lifo ? priority_counter_++ : priority_counter_--;
  coll->total_chunks = static_cast<int>(chunks.size());
  ChunkStore* store = ctx_->store;
  for (auto& phases : chunks) {
    const uint64_t tag = tags::Chunk(group, (*chunk_counter)++);
    Chunk* s = store->Keep(std::unique_ptr<Chunk>(
        new (store->chunk_arena(), rank_) Chunk(this, coll, tag, group_pos, priority, std::move(phases))));
    if (store->Register(s)) TakeEarlyArrivals(tag, &s->mail_);
    // With ASTRA-sim's thresholds every ready chunk is scheduled at once:
    // it moves straight into the queue of its first phase.
    ProceedToNextPhase(s);
  }
}

void NpuSys::InsertChunk(std::list<Chunk*>* queue, Chunk* s) {
  auto it = queue->begin();
  const PhaseSpec& cur = s->phases_[s->next_phase_ - 1];
  uint8_t& mixed = mixed_[s->queue_id_];
  if (queue->empty() || queue->back()->initialized_) mixed = 0;  // no chunk waits: ordered again
  if (ctx_->options->smallest_first && cur.type != ComType::kAllToAll && cur.type != ComType::kAllReduce) {
    mixed = 1;  // ordered by size, not by priority
    // Smallest chunk first; a chunk in its last phase goes to the back.
    if (s->next_phase_ == s->phases_.size()) {
      queue->push_back(s);
      return;
    }
    const uint64_t mine = std::max(cur.size, cur.final_size);
    while (it != queue->end()) {
      const PhaseSpec& other = (*it)->phases_[(*it)->next_phase_ - 1];
      if ((*it)->initialized_ || std::max(other.size, other.final_size) < mine) {
        ++it;
        continue;
      }
      break;
    }
    queue->insert(it, s);
    return;
  }
  // A queue holds its running (initialized) chunks first, then the waiting
  // ones; unless a chunk was placed by size since the queue last had none
  // waiting, those are in non-increasing priority, so when the last chunk
  // ranks before `s`, every one does and `s` goes to the back (O(1) for the
  // many chunks of one collective, which share a priority).
  if (!mixed && !queue->empty() &&
      (queue->back()->initialized_ || queue->back()->priority_ >= s->priority_)) {
    queue->push_back(s);
    return;
  }
  while (it != queue->end()) {
    if ((*it)->initialized_ || (*it)->priority_ >= s->priority_) {
      ++it;
      continue;
    }
    break;
  }
  queue->insert(it, s);
}

void NpuSys::StartWaiting(int q) {
  auto it = active_[q].begin();
  std::advance(it, running_[q]);
  const int limit = ctx_->options->active_chunks_per_dimension;
  while (it != active_[q].end() && running_[q] < limit) {
    Chunk* s = *it;
    ++running_[q];
    ++it;
    s->Init();
  }
}

void NpuSys::NotifyChunkAdded(int q) { StartWaiting(q); }

void NpuSys::NotifyChunkRemoved(int q) {
  --running_[q];
  StartWaiting(q);
}

void NpuSys::EraseFromQueue(int q, Chunk* s) {
  if (q < 0) return;
  auto& list = active_[q];
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (*it == s) {
      list.erase(it);
      return;
    }
  }
}

void NpuSys::ProceedToNextPhase(Chunk* s) {
  const int previous = s->queue_id_;
  if (s->algo_) ctx_->store->Retire(s->TakeAlgorithm());
  const std::vector<PhaseObserver*>& observers = *ctx_->phase_observers;
  if (s->next_phase_ == s->phases_.size()) {
    for (PhaseObserver* o : observers) {
      o->OnPhaseChange(rank_, s->coll_->cookie, s->phase_dim_, PhaseObserver::kNoPhase, ctx_->queue->Now());
    }
    // The workload hears first, while this chunk still holds its place in
    // the queue: a collective it issues now must see the queue as it is.
    CollectiveHandle* coll = s->coll_;
    if (++coll->finished_chunks == coll->total_chunks && coll->client) {
      coll->client->OnCollectiveDone(coll->cookie);  // frees `coll`
    }
    EraseFromQueue(previous, s);
    ctx_->store->Release(s);
    SweepMatches();
    if (previous >= 0) NotifyChunkRemoved(previous);
    return;
  }
  EraseFromQueue(previous, s);
  const PhaseSpec& spec = s->phases_[s->next_phase_++];
  if (!observers.empty()) {
    // A phase is on one network dimension unless it runs over an explicit member
    // list (a flat group), every NPU (one*), or a rooted collective's graph.
    const bool one_dim = spec.ring.members == nullptr && !spec.algo.one && spec.ring.size > 0;
    const int dim = one_dim ? spec.queue_id : PhaseObserver::kNotOneDim;
    for (PhaseObserver* o : observers) o->OnPhaseChange(rank_, s->coll_->cookie, s->phase_dim_, dim, ctx_->queue->Now());
    s->phase_dim_ = dim;
  }
  s->queue_id_ = spec.queue_id;
  s->initialized_ = false;
  s->SetAlgorithm(MakeAlgorithm(s, spec, ctx_->store->algorithm_arena()));
  InsertChunk(&active_[s->queue_id_], s);
  if (previous >= 0) NotifyChunkRemoved(previous);
  NotifyChunkAdded(s->queue_id_);
}

void NpuSys::PostRecv(int src, uint64_t tag, uint64_t sub, RecvClient* client, uint64_t cookie) {
  if (match_.Post(tag, sub, src, client, cookie)) client->OnRecv(cookie);
}

void NpuSys::OnArrival(int src, uint64_t tag, uint64_t sub) {
  RecvClient* client;
  uint64_t cookie;
  if (match_.Arrive(tag, sub, src, &client, &cookie)) client->OnRecv(cookie);
}

void NpuSys::SweepMatches() { match_.Sweep(); }

void NpuSys::DescribeUnmatched(std::vector<std::string>* out) const {
  match_.ForEachArrived([&](uint64_t tag, int src, uint32_t n) {
    if (!tags::IsPointToPoint(tag)) return;
    const uint64_t user_tag = tags::TraceTag(tag);
    out->push_back("rank " + std::to_string(src) + " sent " + std::to_string(n) + " message(s) with tag " +
                   std::to_string(user_tag) + " to rank " + std::to_string(rank_) +
                   ", which has no matching COMM_RECV_NODE");
  });
}

void NpuSys::DescribePending(std::vector<std::string>* out) const {
  auto describe = [&](int src, uint32_t n) {
    out->push_back("rank " + std::to_string(rank_) + " waits for " + std::to_string(n) + " message(s) from rank " +
                   std::to_string(src));
  };
  match_.ForEachWaiting([&](uint64_t, int src, uint32_t n) { describe(src, n); });
  // Chunks in the ChunkDirectory wait in their own mailboxes; every live
  // chunk is in the queue of its current phase.
  for (const std::list<Chunk*>& queue : active_) {
    for (const Chunk* s : queue) s->mail_.ForEachWaiting(describe);
  }
}

void NpuSys::TakeEarlyArrivals(uint64_t tag, Mailbox* mail) {
  if (match_.size() == 0) return;
  early_.clear();
  match_.TakeArrived(tag, 0, &early_);
  for (const auto& [src, n] : early_) mail->AddArrived(src, n);
}

}  // namespace orrery
