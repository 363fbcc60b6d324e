// The deterministic discrete-event kernel. Events are ordered by (time,
// insertion sequence), so equal inputs give equal schedules. Hot-path events
// are plain values (a handler pointer, a kind and one 64-bit argument): no heap
// allocation per event. Closures are available for cold paths.
//
// Layout, in two tiers:
// - The near future, [Now(), Now() + kWheelNs): a timing wheel with one slot
//   per nanosecond. A slot holds one instant's events in insertion order, in a
//   chain of fixed blocks from a shared pool (memory follows the pending
//   events, not the slots). A two-level bitmap finds the next busy slot. Most
//   events (message deliveries, endpoint delays) land here: O(1) to schedule
//   and to run, whatever the number of distinct times in flight.
// - Further ahead (compute, long transfers): FIFO buckets of events, each for
//   one time, in a 4-ary min-heap ordered by (time, the bucket's first
//   sequence number). A new far event joins the newest bucket of its time when
//   that bucket is still in `recent_`, a direct-mapped table indexed by the
//   time's low bits; otherwise it opens a new bucket. A time may so own
//   several buckets; each holds a run of its events scheduled after every
//   event of the older ones, so the heap's order is still (time, sequence).
// At one instant the far tier's events run first: they were all scheduled
// while that instant was still beyond the wheel, so before (lower sequence)
// any event the wheel holds for it. When the wheel's turn comes, the
// instant's events move from their blocks into one array (`run_`) and run
// from there: the common pop is an array read, and the events a few places
// ahead (whose handlers are fetched into the cache) are at fixed offsets —
// always there, since the array ends with placeholder events that name no
// real handler, so the pop checks no bounds for them.
// Events scheduled for the running instant itself go to its slot and move
// over, in order, when `run_` is done.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_set>
#include <vector>

#include "core/huge_pages.h"
#include "core/tick.h"

namespace orrery {

// Anything that receives events implements this.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void HandleEvent(uint32_t kind, uint64_t arg) = 0;
};

// A handler whose events also touch a second object (a stream's algorithm):
// it keeps `prefetch_hint_` pointing there, and schedules its events with
// kinds that carry kHintedKind, so the queue can fetch that object into the
// cache a few events before the handler runs. Only the queue reads the hint.
class HintedEventHandler : public EventHandler {
 public:
  static constexpr uint32_t kHintedKind = 0x80000000u;
  // A relay: a hinted kind that also carries bit 30 (so every kind at or
  // above this value) is not handed to the handler. At its turn the queue
  // schedules, in its place, the same handler's event of the kind without bit
  // 30, `arg` ns later and with argument 0: the new event takes its sequence
  // number then, exactly as if the handler had scheduled it, and the relay
  // still counts as an executed event. For a second hop whose delay is known
  // when the first is scheduled (a stream's reduction after its memory-bus
  // hop): the queue neither calls the handler nor fetches its object for it.
  static constexpr uint32_t kRelayKind = 0xC0000000u;

 protected:
  const void* prefetch_hint_ = nullptr;

 private:
  friend class EventQueue;
};

using EventId = uint64_t;

// A move-only callable (std::function needs copyable targets).
class Closure {
 public:
  Closure() = default;
  template <typename F>
  Closure(F f) : impl_(std::make_unique<Impl<F>>(std::move(f))) {}  // NOLINT: implicit by design
  void operator()() { impl_->Call(); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void Call() = 0;
  };
  template <typename F>
  struct Impl : Base {
    explicit Impl(F fn) : f(std::move(fn)) {}
    void Call() override { f(); }
    F f;
  };
  std::unique_ptr<Base> impl_;
};

class EventQueue {
 public:
  EventQueue() = default;
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  Tick Now() const { return now_; }

  // Schedules handler->HandleEvent(kind, arg) at absolute time `at` (>= Now()).
  // A kind with HintedEventHandler::kHintedKind set promises that `handler` is
  // a HintedEventHandler (the queue reads its hint; at or above
  // HintedEventHandler::kRelayKind: a relay); other handlers use kinds below
  // 2^31.
  // `at` == kTickMax means the time overflowed 2^64 ns (see SatAdd): nothing is
  // scheduled, overflowed() turns true and the run must stop with an error.
  EventId ScheduleAt(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg = 0) {
    // Inline, the common case: within the wheel (which also means at >=
    // Now()), appended to the instant's last block.
    if (at - now_ < kWheelNs && at != kTickMax && WheelReady()) return Append(at, handler, kind, arg);
    return ScheduleSlow(at, handler, kind, arg);
  }
  EventId ScheduleAfter(Tick delay, EventHandler* handler, uint32_t kind, uint64_t arg = 0) {
    // Inline, the common case: a delay within the wheel, the clock far from
    // 2^64 ns (so now_ + delay neither overflows nor reaches kTickMax).
    if (delay < kWheelNs && now_ < kTickMax - kWheelNs && WheelReady()) return Append(now_ + delay, handler, kind, arg);
    if (delay == kTickMax || delay > kTickMax - now_) NoteOverflow(delay);
    return ScheduleAt(SatAdd(now_, delay), handler, kind, arg);
  }
  // Optional, one handler: before an event of `handler` runs, `fn(ctx, arg,
  // stage)` is called for it 3, 2 and 1 times kPrefetchAhead events ahead
  // (stages 0, 1, 2) to prefetch what it will touch, each stage reading what
  // the one before fetched. It must only read (and prefetch): it cannot
  // change the schedule. `handler` is not a HintedEventHandler (its kinds are
  // below 2^31), so none of its events is a relay.
  using PrefetchFn = void (*)(void* ctx, uint64_t arg, int stage);
  void SetPrefetcher(EventHandler* handler, PrefetchFn fn, void* ctx) {
    prefetch_handler_ = handler;
    prefetch_fn_ = fn;
    prefetch_ctx_ = ctx;
  }
  // Cold-path convenience: a move-only closure.
  EventId ScheduleClosureAt(Tick at, Closure fn);

  // Cancels a pending event; cancelling a fired or unknown event is a no-op.
  void Cancel(EventId id);

  // Runs the next event; false when the queue is empty.
  __attribute__((always_inline)) bool RunOne() { return RunNext(kTickMax); }
  // Runs until empty or until time would pass `until`.
  void Run(Tick until = kTickMax);
  // Runs every event before `t`, then moves the clock to `t` (>= Now()).
  void AdvanceTo(Tick t);

  bool Empty() const { return pending_ == 0; }
  size_t Pending() const { return pending_; }
  uint64_t Executed() const { return executed_; }
  Tick NextTime() const;
  // Simulated time would have passed 2^64 ns: the first offending delay and
  // the time it was scheduled at (delay kTickMax: an absolute time overflowed).
  bool overflowed() const { return overflowed_; }
  Tick overflow_delay() const { return overflow_delay_; }
  Tick overflow_at() const { return overflow_at_; }

 private:
  struct Event {
    EventHandler* handler;
    uint64_t arg;
    uint64_t seq;
    uint32_t kind;
  };
  struct Bucket {
    std::vector<Event> events;
    size_t head = 0;
  };
  // The wheel: kWheelNs slots (a power of two), one per nanosecond ahead.
  static constexpr int kWheelBits = 16;
  static constexpr Tick kWheelNs = Tick{1} << kWheelBits;
  static constexpr size_t kWheelMask = kWheelNs - 1;
  static constexpr uint32_t kBlockEvents = 15;  // 512-byte blocks: a sparse instant wastes little
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct alignas(64) Block {
    Event ev[kBlockEvents];
    uint32_t next = kNone;  // the slot's next block (only once this one is full)
  };
  // Everything an append or a run reads is here (not in the cold block's tail).
  struct Slot {
    uint32_t head = kNone;  // first block
    uint32_t tail = kNone;  // block being appended to
    // Events in `tail`; kBlockEvents also when the slot is empty, so "a new
    // block is needed" is one comparison (ScheduleAt).
    uint32_t count = kBlockEvents;
  };
  static constexpr size_t kBlocksPerChunk =
      4096;  // the block array's first size: 2 MiB, one huge page (core/huge_pages.h)
  class ClosureRunner : public EventHandler {
   public:
    void HandleEvent(uint32_t kind, uint64_t arg) override;
    std::vector<Closure> slots;
    std::vector<uint32_t> free_slots;
  };

  // Runs the next event if its time is <= limit; false otherwise. Inline
  // (forced: the simulation's loop calls it once per event): the next event
  // of the running instant (run_), nothing cancelled.
  __attribute__((always_inline)) bool RunNext(Tick limit) {
    if (run_pos_ == run_end_ || run_time_ > limit || !cancelled_.empty()) return RunNextGeneral(limit);
    // run_pos_ is now at most run_end_, and next[kFarthestRead] at most
    // run_[run_end_ + kFarthestRead]: a placeholder (kRunPadding).
    const Event* next = &run_[++run_pos_];
    const Event ev = next[-1];
    now_ = run_time_;
    PrefetchStages(next[kFarthestRead], next[2 * kPrefetchAhead], next[kPrefetchAhead]);
    --pending_;
    ++executed_;
    if (ev.kind >= HintedEventHandler::kRelayKind) {
      Relay(ev);
      return true;
    }
    ev.handler->HandleEvent(ev.kind, ev.arg);
    return true;
  }
  void Relay(const Event& ev) {
    ScheduleAfter(ev.arg, ev.handler, ev.kind & ~(HintedEventHandler::kRelayKind ^ HintedEventHandler::kHintedKind), 0);
  }
  // The wheel's slots exist (allocated by the first ScheduleSlow, kept until
  // the queue goes): one load, not the vector's two.
  bool WheelReady() const { return slots_.data() != nullptr; }
  // Appends an event at `at` (in the wheel: now_ <= at < now_ + kWheelNs) to
  // its instant's last block.
  EventId Append(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg) {
    const size_t s = at & kWheelMask;
    Slot& sl = slots_[s];
    // The slot was empty or its block full: out of line, so that the common
    // case makes no call (its callers, inlined, then need no saved registers).
    if (sl.count == kBlockEvents) return AppendToNewBlock(at, handler, kind, arg);
    const uint64_t seq = next_seq_++;
    Event& e = blocks_[sl.tail].ev[sl.count++];
    e.handler = handler;
    e.arg = arg;
    e.seq = seq;
    e.kind = kind;
    ++wheel_pending_;
    ++pending_;
    return seq;
  }
  // Every other case: the next instant (the far tier's events first), a
  // cancelled event, the limit.
  bool RunNextGeneral(Tick limit);
  // Moves the events of the busy slot `s` (the instant `t`) into run_ and
  // frees the slot. The clock moves when one of them runs (not if all are
  // cancelled).
  void LoadInstant(uint32_t s, Tick t);
  // ScheduleAt's other cases: the first wheel event (the wheel is allocated
  // then), the far tier, an overflowed or past time.
  EventId ScheduleSlow(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg);
  void NoteOverflow(Tick delay) {
    if (overflowed_) return;
    overflowed_ = true;
    overflow_delay_ = delay;
    overflow_at_ = now_;
  }
  struct HeapEntry {
    Tick time;
    uint64_t first_seq;  // the bucket's first event: orders buckets of one time
    uint32_t bucket;
    bool Before(const HeapEntry& o) const { return time != o.time ? time < o.time : first_seq < o.first_seq; }
  };
  struct Recent {
    Tick time = kTickMax;
    uint32_t bucket = 0;
  };
  static constexpr size_t kRecent = 1024;      // power of two
  static constexpr size_t kPrefetchAhead = 4;  // events
  // RunNext reads run_ up to kFarthestRead past its new position; LoadInstant
  // ends run_ with kRunPadding placeholders, so that read is always an event.
  static constexpr size_t kFarthestRead = 3 * kPrefetchAhead;
  static constexpr size_t kRunPadding = kFarthestRead + 1;
  void PushHeap(HeapEntry e);
  void PopHeap();
  Bucket* BucketFor(Tick t, uint64_t seq);
  // The wheel's parts.
  Block& BlockAt(uint32_t b) { return blocks_[b]; }
  uint32_t NewBlock();
  void GrowBlocks();
  // A new tail block for slot `s` (empty, or its tail full); marks it busy.
  void OpenBlock(size_t s);
  // Append when the slot needs a new block: OpenBlock, then Append.
  EventId AppendToNewBlock(Tick at, EventHandler* handler, uint32_t kind, uint64_t arg);
  // The busy slot holding the wheel's earliest time (kNone when empty):
  // inline when it is in the bitmap word of Now().
  uint32_t WheelFirst() const {
    if (wheel_pending_ == 0) return kNone;
    const size_t p = now_ & kWheelMask;
    const size_t w = p >> 6;
    if (const uint64_t m = busy_[w] & (~uint64_t{0} << (p & 63)))
      return static_cast<uint32_t>((w << 6) + __builtin_ctzll(m));
    return WheelFirstAfter(w);
  }
  uint32_t WheelFirstAfter(size_t word) const;
  Tick WheelTime(uint32_t slot) const { return now_ + ((slot - now_) & kWheelMask); }
  // Prefetches for the events 3, 2 and 1 times kPrefetchAhead places ahead of
  // the one about to run (`far`, `mid`, `near`); any may be null (the far
  // tier's buckets). PrefetchStages: the same for events that exist (run_,
  // whose placeholders end it).
  // The handlers of a busy instant are usually many different objects (one
  // per NPU) whose first cache lines are cold: ask for the ones a few events
  // ahead now, so they are in cache when their turn comes (no effect on
  // order). Three distances, each reading only what the farther one fetched:
  // a hinted handler (HintedEventHandler) is fetched at `mid` and its hint at
  // `near`; the registered prefetcher (the engine's deliveries) names its cold
  // objects in three stages; any other handler is fetched at `near`. Inline:
  // it runs for every event.
  void PrefetchFor(const Event* far, const Event* mid, const Event* near) const {
    PrefetchStages(far ? *far : kPlaceholder, mid ? *mid : kPlaceholder, near ? *near : kPlaceholder);
  }
  __attribute__((always_inline)) void PrefetchStages(const Event& far, const Event& mid, const Event& near) const {
    if (far.handler == prefetch_handler_) prefetch_fn_(prefetch_ctx_, far.arg, 0);
    // A relay touches nothing but the queue: nothing to fetch for it.
    if ((mid.kind >> 30) == (HintedEventHandler::kHintedKind >> 30)) {  // hinted, not a relay
      __builtin_prefetch(mid.handler);
      __builtin_prefetch(reinterpret_cast<const char*>(mid.handler) + 64);
    } else if (mid.handler == prefetch_handler_) {
      prefetch_fn_(prefetch_ctx_, mid.arg, 1);
    }
    if (near.kind >= HintedEventHandler::kRelayKind) return;
    if (near.kind & HintedEventHandler::kHintedKind) {
      if (const void* hint = static_cast<const HintedEventHandler*>(near.handler)->prefetch_hint_) {
        __builtin_prefetch(hint);
      }
    } else if (near.handler == prefetch_handler_) {
      prefetch_fn_(prefetch_ctx_, near.arg, 2);
    } else {
      __builtin_prefetch(near.handler);
    }
  }
  // The placeholder event: it names a handler that is never called (and
  // never the prefetcher's), with kind 0 (neither hinted nor a relay).
  class NoHandler final : public EventHandler {
   public:
    void HandleEvent(uint32_t, uint64_t) override {}
  };
  static inline NoHandler no_handler_;
  static inline const Event kPlaceholder{&no_handler_, 0, 0, 0};

  std::vector<Slot, HugePageAllocator<Slot>> slots_;  // [time % kWheelNs] (1 MiB: huge pages), allocated on first use
  std::vector<uint64_t> busy_;                        // bit per slot: it holds events
  std::vector<uint64_t> busy_words_;                  // bit per word of busy_: it is non-zero
  Block* blocks_ = nullptr;  // every block, from AllocateHuge (grown by doubling; events name blocks by index)
  uint32_t block_count_ = 0;
  std::vector<uint32_t> free_blocks_;
  size_t wheel_pending_ = 0;  // events in the slots (not counting run_)
  // The running instant's events, [run_pos_, run_end_) still to run, then
  // kRunPadding placeholders (kPlaceholder): RunNext reads that far past the
  // event it runs.
  std::vector<Event> run_;
  size_t run_pos_ = 0;
  size_t run_end_ = 0;
  Tick run_time_ = 0;            // their time
  std::vector<HeapEntry> heap_;  // 4-ary min-heap of buckets with pending events
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  std::array<Recent, kRecent> recent_;  // [time % kRecent]: the newest bucket of that time, if open
  std::unordered_set<uint64_t> cancelled_;
  EventHandler* prefetch_handler_ = nullptr;
  PrefetchFn prefetch_fn_ = nullptr;
  void* prefetch_ctx_ = nullptr;
  ClosureRunner closures_;
  Tick now_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  size_t pending_ = 0;
  bool overflowed_ = false;
  Tick overflow_delay_ = 0, overflow_at_ = 0;
};

}  // namespace orrery
