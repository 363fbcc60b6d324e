#include "core/event_queue.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "core/huge_pages.h"
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

EventQueue::~EventQueue() {
  static_assert(std::is_trivially_copyable_v<Block>);
  FreeHuge(blocks_);
}

void EventQueue::GrowBlocks() {
  const size_t old = block_count_;
  const size_t n = old == 0 ? kBlocksPerChunk : 2 * old;
  ORRERY_CHECK(n < kNone, "event queue: too many pending events");
  // Blocks are named by index, so the array may move: copy the pending ones.
  Block* bigger = static_cast<Block*>(AllocateHuge(n * sizeof(Block)));
  if (old > 0) std::memcpy(static_cast<void*>(bigger), blocks_, old * sizeof(Block));
  for (size_t i = old; i < n; ++i) new (&bigger[i]) Block();
  FreeHuge(blocks_);
  blocks_ = bigger;
  block_count_ = static_cast<uint32_t>(n);
  for (size_t i = n; i > old; --i) free_blocks_.push_back(static_cast<uint32_t>(i - 1));  // lowest on top
}

uint32_t EventQueue::NewBlock() {
  if (free_blocks_.empty()) GrowBlocks();
  const uint32_t b = free_blocks_.back();
  free_blocks_.pop_back();
  BlockAt(b).next = kNone;
  return b;
}

void EventQueue::OpenBlock(size_t s) {
  const uint32_t b = NewBlock();
  Slot& sl = slots_[s];
  if (sl.tail == kNone) {
    sl.head = b;
    busy_[s >> 6] |= uint64_t{1} << (s & 63);
    busy_words_[s >> 12] |= uint64_t{1} << ((s >> 6) & 63);
  } else {
    BlockAt(sl.tail).next = b;
  }
  sl.tail = b;
  sl.count = 0;
}

EventId EventQueue::AppendToNewBlock(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg) {
  OpenBlock(at & kWheelMask);
  return Append(at, handler, kind, arg);
}

uint32_t EventQueue::WheelFirstAfter(size_t w) const {
  // The first non-empty word after w, then (wrapping) from the start: a slot
  // below p stands for a time after every slot at or above it.
  for (size_t from : {w + 1, size_t{0}}) {
    for (size_t sw = from >> 6; sw < busy_words_.size(); ++sw) {
      uint64_t m = busy_words_[sw];
      if (sw == (from >> 6)) m &= ~uint64_t{0} << (from & 63);
      if (m) {
        const size_t word = (sw << 6) + __builtin_ctzll(m);
        return static_cast<uint32_t>((word << 6) + __builtin_ctzll(busy_[word]));
      }
    }
  }
  return kNone;
}

void EventQueue::LoadInstant(uint32_t s, Tick t) {
  Slot& sl = slots_[s];
  run_.clear();
  run_pos_ = 0;
  run_time_ = t;
  for (uint32_t b = sl.head;;) {
    const Block& blk = BlockAt(b);
    const bool last = b == sl.tail;
    const uint32_t filled = last ? sl.count : kBlockEvents;
    run_.insert(run_.end(), blk.ev, blk.ev + filled);
    const uint32_t next = blk.next;
    free_blocks_.push_back(b);
    if (last) break;
    b = next;
  }
  run_end_ = run_.size();
  run_.insert(run_.end(), kRunPadding, kPlaceholder);  // RunNext's farthest read after the last event
  wheel_pending_ -= run_end_;
  sl = Slot{};
  busy_[s >> 6] &= ~(uint64_t{1} << (s & 63));
  if (busy_[s >> 6] == 0) busy_words_[s >> 12] &= ~(uint64_t{1} << ((s >> 6) & 63));
}

EventId EventQueue::ScheduleSlow(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg) {
  ORRERY_CHECK(at >= now_, "event scheduled in the past");
  if (at == kTickMax) {
    NoteOverflow(kTickMax);
    return next_seq_++;  // never runs
  }
  if (at - now_ < kWheelNs) {
    // The first event for the wheel: allocate it, then append as ever.
    slots_.resize(kWheelNs);
    busy_.assign(kWheelNs / 64, 0);
    busy_words_.assign(kWheelNs / 64 / 64, 0);
    return ScheduleAt(at, handler, kind, arg);
  }
  const uint64_t seq = next_seq_++;
  BucketFor(at, seq)->events.push_back(Event{handler, arg, seq, kind});
  ++pending_;
  return seq;
}

Tick EventQueue::NextTime() const {
  if (run_pos_ < run_end_) return run_time_;  // the running instant has events left
  // The far tier's earliest bucket that still holds events (a drained one
  // waits at the front until RunNext recycles it). Cold path: scans the heap.
  Tick far = kTickMax;
  for (const HeapEntry& h : heap_) {
    const Bucket& b = buckets_[h.bucket];
    if (b.head < b.events.size()) far = std::min(far, h.time);
  }
  const uint32_t s = WheelFirst();
  return s == kNone ? far : std::min(far, WheelTime(s));
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

bool EventQueue::RunNextGeneral(Tick limit) {
  while (true) {
    Event ev;
    Tick t;
    if (run_pos_ < run_end_) {
      // The running instant (RunNext left it here for a cancellation or the limit).
      t = run_time_;
      if (t > limit) return false;
      ev = run_[run_pos_++];
    } else {
      const uint32_t slot = WheelFirst();
      const Tick wheel_t = slot == kNone ? kTickMax : WheelTime(slot);
      if (heap_.empty() || heap_.front().time > wheel_t) {
        // The wheel's instant comes next (the far tier has nothing at or before it).
        if (slot == kNone || wheel_t > limit) return false;
        LoadInstant(slot, wheel_t);
        continue;
      }
      t = heap_.front().time;
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
      ev = bucket.events[bucket.head++];
      const size_t n = bucket.events.size();
      auto ahead = [&](size_t k) { return bucket.head + k < n ? &bucket.events[bucket.head + k] : nullptr; };
      PrefetchFor(ahead(3 * kPrefetchAhead), ahead(2 * kPrefetchAhead), ahead(kPrefetchAhead));
    }
    --pending_;
    if (!cancelled_.empty()) {
      auto it = cancelled_.find(ev.seq);
      if (it != cancelled_.end()) {
        cancelled_.erase(it);
        continue;  // the clock does not move for a cancelled event
      }
    }
    now_ = t;
    ++executed_;
    if (ev.kind >= HintedEventHandler::kRelayKind) {
      Relay(ev);
      return true;
    }
    ev.handler->HandleEvent(ev.kind, ev.arg);
    return true;
  }
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
