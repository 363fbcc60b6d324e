#include "core/event_queue.h"

#include <algorithm>

#include "core/status.h"

namespace orrery {

void EventQueue::PushHeap(HeapEntry e) {
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!e.Before(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::PopHeap() {
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  size_t i = 0;
  while (true) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + 4, n);
    for (size_t c = first + 1; c < end; ++c) {
      if (heap_[c].Before(heap_[best])) best = c;
    }
    if (!heap_[best].Before(last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

EventQueue::Bucket* EventQueue::BucketFor(Tick t, uint64_t seq) {
  Recent& r = recent_[t & (kRecent - 1)];
  if (r.time == t) return &buckets_[r.bucket];
  uint32_t b;
  if (!free_buckets_.empty()) {
    b = free_buckets_.back();
    free_buckets_.pop_back();
  } else {
    b = static_cast<uint32_t>(buckets_.size());
    buckets_.emplace_back();
  }
  r.time = t;
  r.bucket = b;
  PushHeap(HeapEntry{t, seq, b});
  return &buckets_[b];
}

EventId EventQueue::ScheduleAt(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg) {
  ORRERY_CHECK(at >= now_, "event scheduled in the past");
  if (at == kTickMax) {
    NoteOverflow(kTickMax);
    return next_seq_++;  // never runs
  }
  const uint64_t seq = next_seq_++;
  BucketFor(at, seq)->events.push_back(Event{handler, arg, seq, kind});
  ++pending_;
  return seq;
}

EventId EventQueue::ScheduleClosureAt(Tick at, Closure fn) {
  uint32_t slot;
  if (!closures_.free_slots.empty()) {
    slot = closures_.free_slots.back();
    closures_.free_slots.pop_back();
    closures_.slots[slot] = std::move(fn);
  } else {
    slot = static_cast<uint32_t>(closures_.slots.size());
    closures_.slots.push_back(std::move(fn));
  }
  return ScheduleAt(at, &closures_, 0, slot);
}

void EventQueue::ClosureRunner::HandleEvent(uint32_t, uint64_t arg) {
  Closure fn = std::move(slots[arg]);
  slots[arg] = Closure();
  free_slots.push_back(static_cast<uint32_t>(arg));
  fn();
}

void EventQueue::Cancel(EventId id) {
  if (id < next_seq_) cancelled_.insert(id);
}

bool EventQueue::RunNext(Tick limit) {
  while (!heap_.empty()) {
    const Tick t = heap_.front().time;
    if (t > limit) return false;
    const uint32_t b = heap_.front().bucket;
    Bucket& bucket = buckets_[b];
    if (bucket.head == bucket.events.size()) {
      // This bucket is drained: recycle it (closed to new events first).
      bucket.events.clear();
      bucket.head = 0;
      Recent& r = recent_[t & (kRecent - 1)];
      if (r.time == t && r.bucket == b) r.time = kTickMax;
      free_buckets_.push_back(b);
      PopHeap();
      continue;
    }
    const Event ev = bucket.events[bucket.head++];
    // The handlers of a large bucket are usually many different objects (one
    // per NPU) whose first cache line is cold: ask for the one a few events
    // ahead now, so it is in cache when its turn comes (no effect on order).
    // A handler with a prefetcher (the engine's deliveries) names the cold
    // object itself, in two stages: its record first, then what the record points to.
    const size_t n = bucket.events.size();
    if (bucket.head + 2 * kPrefetchAhead < n) {
      const Event& a = bucket.events[bucket.head + 2 * kPrefetchAhead];
      if (a.handler == prefetch_handler_) prefetch_fn_(prefetch_ctx_, a.arg, 0);
    }
    if (bucket.head + kPrefetchAhead < n) {
      const Event& a = bucket.events[bucket.head + kPrefetchAhead];
      if (a.handler == prefetch_handler_) {
        prefetch_fn_(prefetch_ctx_, a.arg, 1);
      } else {
        __builtin_prefetch(a.handler);
      }
    }
    --pending_;
    if (!cancelled_.empty()) {
      auto it = cancelled_.find(ev.seq);
      if (it != cancelled_.end()) {
        cancelled_.erase(it);
        continue;
      }
    }
    now_ = t;
    ++executed_;
    ev.handler->HandleEvent(ev.kind, ev.arg);
    return true;
  }
  return false;
}

void EventQueue::Run(Tick until) {
  while (RunNext(until)) {
  }
}

}  // namespace orrery

namespace orrery {

void EventQueue::AdvanceTo(Tick t) {
  if (t > 0) {
    while (RunNext(t - 1)) {
    }
  }
  if (t > now_) now_ = t;
}

}  // namespace orrery
