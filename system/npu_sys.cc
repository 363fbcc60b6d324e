#include "system/npu_sys.h"

#include <algorithm>
#include <string>

#include "core/status.h"
#include "system/chunk.h"
#include "system/chunk_store.h"
#include "system/tag.h"

namespace orrery {

NpuSys::NpuSys(const ChunkContext* ctx, int rank, int num_queues)
    : ctx_(ctx),
      rank_(rank),
      num_dims_queues_(num_queues),
      running_(num_queues, 0),
      placed_by_size_(num_queues, 0) {}

int NpuSys::QueueOf(int stream, int id) {
  if (streams_.size() <= static_cast<size_t>(stream)) {
    while (streams_.size() <= static_cast<size_t>(stream)) {
      streams_.push_back(std::make_unique<std::list<Chunk*>[]>(num_dims_queues_));
    }
    running_.resize(streams_.size() * num_dims_queues_, 0);
    placed_by_size_.resize(streams_.size() * num_dims_queues_, 0);
  }
  const size_t q = static_cast<size_t>(stream) * num_dims_queues_ + id;
  return static_cast<int>(q);
}

void NpuSys::StartCollective(CollectiveHandle* coll, std::vector<std::vector<PhaseSpec>> chunks, int group,
                             int group_pos, uint64_t* chunk_counter) {
  const int priority = ctx_->options->lifo ? next_priority_++ : next_priority_--;
  coll->total_chunks = static_cast<int>(chunks.size());
  ChunkStore* store = ctx_->store;
  for (auto& phases : chunks) {
    const uint64_t tag = tags::Chunk(group, (*chunk_counter)++);
    Chunk* s = store->Keep(std::unique_ptr<Chunk>(new (store->chunk_arena(), rank_)
                                                      Chunk(this, coll, tag, group_pos, priority, std::move(phases))));
    if (store->Register(s)) TakeEarlyArrivals(tag, &s->mail_);
    // With ASTRA-sim's thresholds every ready chunk is scheduled at once:
    // it moves straight into the queue of its first phase.
    ProceedToNextPhase(s);
  }
}

void NpuSys::Enqueue(std::list<Chunk*>* queue, Chunk* s) {
  const PhaseSpec& cur = s->phases_[s->next_phase_ - 1];
  uint8_t& by_size = placed_by_size_[s->queue_id_];
  if (queue->empty() || queue->back()->phase_started_) by_size = 0;  // no chunk waits: ordered again
  if (ctx_->options->smallest_first && cur.type != ComType::kAllToAll && cur.type != ComType::kAllReduce) {
    by_size = 1;  // ordered by size, not by priority
    EnqueueBySize(queue, s);
    return;
  }
  EnqueueByPriority(queue, s, by_size);
}

void NpuSys::EnqueueBySize(std::list<Chunk*>* queue, Chunk* s) {
  // Smallest chunk first; a chunk in its last phase goes to the back.
  if (s->next_phase_ == s->phases_.size()) {
    queue->push_back(s);
    return;
  }
  const PhaseSpec& cur = s->phases_[s->next_phase_ - 1];
  const uint64_t mine = std::max(cur.size, cur.final_size);
  auto it = queue->begin();
  while (it != queue->end()) {
    const PhaseSpec& other = (*it)->phases_[(*it)->next_phase_ - 1];
    if ((*it)->phase_started_ || std::max(other.size, other.final_size) < mine) {
      ++it;
      continue;
    }
    break;
  }
  queue->insert(it, s);
}

inline void NpuSys::EnqueueByPriority(std::list<Chunk*>* queue, Chunk* s, bool by_size) {
  // A queue holds its running chunks first, then the waiting ones; unless a
  // chunk was placed by size since the queue last had none waiting, those
  // are in non-increasing priority, so when the last chunk ranks before `s`,
  // every one does and `s` goes to the back (O(1) for the many chunks of one
  // collective, which share a priority).
  if (!by_size && !queue->empty() && (queue->back()->phase_started_ || queue->back()->priority_ >= s->priority_)) {
    queue->push_back(s);
    return;
  }
  auto it = queue->begin();
  while (it != queue->end()) {
    if ((*it)->phase_started_ || (*it)->priority_ >= s->priority_) {
      ++it;
      continue;
    }
    break;
  }
  queue->insert(it, s);
}

void NpuSys::StartWaitingChunks(int q) {
  std::list<Chunk*>& queue = Queue(q);
  auto it = queue.begin();
  std::advance(it, running_[q]);
  const int limit = ctx_->options->active_chunks_per_dimension;
  while (it != queue.end() && running_[q] < limit) {
    Chunk* s = *it;
    ++running_[q];
    ++it;
    s->StartPhase();
  }
}

inline void NpuSys::LeaveRunning(int q) {
  --running_[q];
  StartWaitingChunks(q);
}

void NpuSys::EraseFromQueue(int q, Chunk* s) {
  if (q < 0) return;
  auto& list = Queue(q);
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (*it == s) {
      list.erase(it);
      return;
    }
  }
}

inline void NpuSys::TellPhaseObservers(const Chunk* s, int to_dim) {
  for (PhaseObserver* o : *ctx_->phase_observers) {
    o->OnPhaseChange(rank_, s->coll_->cookie, s->phase_dim_, to_dim, ctx_->queue->Now());
  }
}

void NpuSys::ProceedToNextPhase(Chunk* s) {
  const int previous = s->queue_id_;
  if (s->algo_) ctx_->store->Retire(s->TakeAlgorithm());
  if (s->next_phase_ == s->phases_.size()) {
    EndChunk(s, previous);
    return;
  }
  EraseFromQueue(previous, s);
  const PhaseSpec& spec = s->phases_[s->next_phase_++];
  if (!ctx_->phase_observers->empty()) {
    // A phase is on one network dimension unless it runs over an explicit member
    // list (a flat group), every NPU (one*), or a rooted collective's graph.
    const bool one_dim = spec.ring.members == nullptr && !spec.algo.one && spec.ring.size > 0;
    const int dim = one_dim ? spec.queue_id : PhaseObserver::kNotOneDim;
    TellPhaseObservers(s, dim);
    s->phase_dim_ = dim;
  }
  s->queue_id_ = QueueOf(s->coll_->stream, spec.queue_id);
  s->phase_started_ = false;
  s->SetAlgorithm(MakeAlgorithm(s, spec, ctx_->store->algorithm_arena()));
  Enqueue(&Queue(s->queue_id_), s);
  if (previous >= 0) LeaveRunning(previous);
  StartWaitingChunks(s->queue_id_);
}

void NpuSys::EndChunk(Chunk* s, int previous) {
  TellPhaseObservers(s, PhaseObserver::kNoPhase);
  // The workload hears first, while this chunk still holds its place in
  // the queue: a collective it issues now must see the queue as it is.
  CollectiveHandle* coll = s->coll_;
  if (++coll->finished_chunks == coll->total_chunks && coll->client) {
    coll->client->OnCollectiveDone(coll->cookie);  // frees `coll`
  }
  EraseFromQueue(previous, s);
  ctx_->store->Release(s);
  SweepMatches();
  if (previous >= 0) LeaveRunning(previous);
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
  for (const auto& stream : streams_) {
    for (int d = 0; d < num_dims_queues_; ++d) {
      for (const Chunk* s : stream[d]) s->mail_.ForEachWaiting(describe);
    }
  }
}

void NpuSys::TakeEarlyArrivals(uint64_t tag, Mailbox* mail) {
  if (match_.size() == 0) return;
  early_arrivals_.clear();
  match_.TakeArrived(tag, 0, &early_arrivals_);
  for (const auto& [src, n] : early_arrivals_) mail->AddArrived(src, n);
}

}  // namespace orrery
