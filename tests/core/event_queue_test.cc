#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "core/event_queue.h"

namespace orrery {
namespace {

struct Recorder : EventHandler {
  std::vector<uint64_t> seen;
  std::vector<Tick> at;
  EventQueue* q = nullptr;
  void HandleEvent(uint32_t, uint64_t arg) override {
    seen.push_back(arg);
    at.push_back(q->Now());
  }
};

TEST(EventQueue, RunsInTimeOrder) {
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.ScheduleAt(30, &r, 0, 3);
  q.ScheduleAt(10, &r, 0, 1);
  q.ScheduleAt(20, &r, 0, 2);
  q.Run();
  EXPECT_EQ(r.seen, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(r.at, (std::vector<Tick>{10, 20, 30}));
}

TEST(EventQueue, EqualTimesRunInInsertionOrder) {
  EventQueue q;
  Recorder r;
  r.q = &q;
  for (uint64_t i = 0; i < 100; ++i) q.ScheduleAt(5, &r, 0, i);
  q.Run();
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(r.seen[i], i);
}

TEST(EventQueue, CancelledEventDoesNotRun) {
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.ScheduleAt(1, &r, 0, 1);
  EventId id = q.ScheduleAt(2, &r, 0, 2);
  q.ScheduleAt(3, &r, 0, 3);
  q.Cancel(id);
  q.Run();
  EXPECT_EQ(r.seen, (std::vector<uint64_t>{1, 3}));
}

// A cancelled event does not move the clock, in either tier: after the run
// the clock is at the last event that ran, and an event may still be
// scheduled between the two.
TEST(EventQueue, CancelledEventsDoNotMoveTheClock) {
  for (Tick cancelled_at : {Tick{500}, Tick{1} << 20}) {  // inside the wheel, in the far tier
    EventQueue q;
    Recorder r;
    r.q = &q;
    q.ScheduleAt(10, &r, 0, 1);
    q.Cancel(q.ScheduleAt(cancelled_at, &r, 0, 2));
    q.Run();
    EXPECT_EQ(r.seen, (std::vector<uint64_t>{1})) << cancelled_at;
    EXPECT_EQ(q.Now(), Tick{10}) << cancelled_at;
    q.ScheduleAt(50, &r, 0, 3);  // would be "in the past" had the clock moved
    q.Run();
    EXPECT_EQ(r.seen, (std::vector<uint64_t>{1, 3})) << cancelled_at;
    EXPECT_EQ(q.Now(), Tick{50}) << cancelled_at;
  }
}

// Near the end of time an absolute time of 2^64 - 1 ns is within the wheel's
// reach; it is still an overflow (nothing runs), not an event.
TEST(EventQueue, TimeMaxNearTheEndIsAnOverflow) {
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.ScheduleAt(1, &r, 0, 1);  // the wheel exists from here on
  q.Run();
  q.AdvanceTo(kTickMax - 100);
  q.ScheduleAt(kTickMax, &r, 0, 2);
  EXPECT_TRUE(q.overflowed());
  EXPECT_EQ(q.overflow_delay(), kTickMax);
  q.Run();
  EXPECT_EQ(r.seen, (std::vector<uint64_t>{1}));
}

TEST(EventQueue, ClosuresOwnTheirData) {
  EventQueue q;
  auto data = std::make_unique<int>(41);
  int result = 0;
  q.ScheduleClosureAt(7, [d = std::move(data), &result] { result = *d + 1; });
  q.Run();
  EXPECT_EQ(result, 42);
  EXPECT_EQ(q.Now(), 7u);
}

TEST(EventQueue, TwoQueuesAreIndependent) {
  EventQueue a, b;
  Recorder ra, rb;
  ra.q = &a;
  rb.q = &b;
  a.ScheduleAt(100, &ra, 0, 1);
  b.ScheduleAt(5, &rb, 0, 2);
  b.Run();
  EXPECT_EQ(b.Now(), 5u);
  EXPECT_EQ(a.Now(), 0u);
  a.Run();
  EXPECT_EQ(ra.seen, (std::vector<uint64_t>{1}));
}

// The registered prefetcher is asked about events of the running instant
// only: never about the placeholders that end the instant's array (arg 0
// here), never about the next instant's. By the rule in core/event_queue.h,
// an instant's first event is taken by the general path, which asks nothing;
// when its event i >= 1 runs, stages 0, 1 and 2 are asked about the events
// 12, 8 and 4 places after the next one (i + 13, i + 9, i + 5), when those
// exist and are the prefetcher's handler's.
TEST(EventQueue, PrefetcherIsAskedOnlyAboutTheInstantsOwnEvents) {
  struct Plain : EventHandler {
    std::vector<uint64_t>* ran = nullptr;
    void HandleEvent(uint32_t, uint64_t arg) override { ran->push_back(arg); }
  };
  using Ask = std::pair<uint64_t, int>;  // (event's arg, stage)
  EventQueue q;
  std::vector<uint64_t> ran;
  Plain mine, other;
  mine.ran = &ran;
  other.ran = &ran;
  std::vector<Ask> asked;
  q.SetPrefetcher(
      &mine,
      [](void* ctx, uint64_t arg, int stage) {
        static_cast<std::vector<Ask>*>(ctx)->push_back({arg, stage});
      },
      &asked);
  std::vector<Ask> want;
  std::vector<uint64_t> order;
  uint64_t id = 1;
  for (int n = 1; n <= 20; ++n) {
    const Tick t = 10 * static_cast<Tick>(n);
    std::vector<std::pair<bool, uint64_t>> events;  // (the prefetcher's handler, arg)
    for (int i = 0; i < n; ++i, ++id) {
      const bool m = i % 3 != 1;  // every third event another handler's
      events.push_back({m, id});
      order.push_back(id);
      q.ScheduleAt(t, m ? static_cast<EventHandler*>(&mine) : &other, 0, id);
    }
    for (int i = 1; i < n; ++i) {
      for (const auto& [ahead, stage] : {std::pair<int, int>{13, 0}, {9, 1}, {5, 2}}) {
        const int j = i + ahead;
        if (j < n && events[j].first) want.push_back({events[j].second, stage});
      }
    }
  }
  q.Run();
  EXPECT_EQ(ran, order);
  EXPECT_EQ(asked, want);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(EventQueue, RunUntilStopsAtTheLimitEvenAfterADrainedInstant) {
  EventQueue q;
  struct R : EventHandler {
    std::vector<Tick> at;
    EventQueue* q;
    void HandleEvent(uint32_t, uint64_t) override { at.push_back(q->Now()); }
  } r;
  r.q = &q;
  q.ScheduleAt(10, &r, 0);
  q.ScheduleAt(30, &r, 0);
  q.Run(10);
  EXPECT_EQ(r.at, (std::vector<Tick>{10}));
  q.Run(20);  // the drained bucket at 10 is recycled, 30 must not run
  EXPECT_EQ(r.at, (std::vector<Tick>{10}));
  q.AdvanceTo(30);  // runs events before 30 only
  EXPECT_EQ(r.at, (std::vector<Tick>{10}));
  EXPECT_EQ(q.Now(), 30u);
  q.Run();
  EXPECT_EQ(r.at, (std::vector<Tick>{10, 30}));
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// The two tiers (a wheel for the next 2^16 ns, buckets beyond) against a
// model: a sorted set of (time, sequence). Handlers schedule more events at
// delays that land on both tiers and on the boundary between them, at the
// same instant (delay 0), and cancel some; Run(limit) and AdvanceTo cut in.
TEST(EventQueue, TwoTiersRunInTimeThenSequenceOrderLikeASortedModel) {
  struct Model : EventHandler {
    EventQueue* q = nullptr;
    std::set<std::pair<Tick, uint64_t>> pending;  // (time, sequence)
    std::vector<std::pair<Tick, uint64_t>> ran;
    std::vector<EventId> ids;
    uint64_t rng = 12345;
    int budget = 200000;
    uint64_t Next() {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      return rng;
    }
    Tick Delay() {
      switch (Next() % 8) {
        case 0: return 0;
        case 1: return Next() % 4;
        case 2: return (Tick{1} << 16) - 1 - Next() % 3;  // the wheel's last slots
        case 3: return (Tick{1} << 16) + Next() % 3;      // just beyond it
        case 4: return Next() % 1000000;                  // far
        default: return Next() % 3000;
      }
    }
    void Add(Tick delay) {
      const Tick at = q->Now() + delay;
      const EventId id = q->ScheduleAt(at, this, 0, 0);
      pending.insert({at, id});
      ids.push_back(id);
    }
    void HandleEvent(uint32_t, uint64_t) override {
      ASSERT_FALSE(pending.empty());
      const auto first = *pending.begin();
      pending.erase(pending.begin());
      ran.push_back(first);
      EXPECT_EQ(q->Now(), first.first);
      const int children = budget > 0 ? static_cast<int>(Next() % 3) : 0;
      for (int i = 0; i < children; ++i, --budget) Add(Delay());
      if (Next() % 16 == 0 && !ids.empty()) {  // cancel a random earlier event (a no-op if it ran)
        const EventId id = ids[Next() % ids.size()];
        q->Cancel(id);
        for (auto it = pending.begin(); it != pending.end(); ++it) {
          if (it->second == id) {
            pending.erase(it);
            break;
          }
        }
      }
    }
  };
  EventQueue q;
  Model m;
  m.q = &q;
  for (int i = 0; i < 64; ++i) m.Add(m.Delay());
  size_t ran_before = 0;
  for (int round = 0; !q.Empty(); ++round) {
    const Tick next = m.pending.empty() ? kTickMax : m.pending.begin()->first;
    // A cancelled event is dropped when its turn comes: until then it may be the next time.
    EXPECT_LE(q.NextTime(), next) << round;
    EXPECT_GE(q.NextTime(), q.Now()) << round;
    if (round % 3 == 0) {
      q.Run(q.Now() + 500);
    } else if (round % 3 == 1 && next != kTickMax) {
      q.AdvanceTo(next + 1);  // runs everything at `next`, then moves the clock past it
    } else {
      q.RunOne();
    }
    if (m.ran.size() == ran_before && m.pending.empty()) break;  // only cancelled events were left
    ran_before = m.ran.size();
  }
  EXPECT_TRUE(m.pending.empty());
  EXPECT_GT(m.ran.size(), 100000u);
  for (size_t i = 1; i < m.ran.size(); ++i) ASSERT_LT(m.ran[i - 1], m.ran[i]) << i;
}

// A relay (HintedEventHandler::kRelayKind) is never handed to its handler:
// at its turn the queue schedules the kind without bit 30, `arg` ns later,
// taking its sequence number then. Worked by hand: at 0, A is scheduled for
// 15, then X, the relay R (5 ns on) and B for 10. At 10 X runs first (so R
// runs from the loaded instant, the inline path), R puts K at 15 behind A,
// then B puts C at 15 behind K. In the far tier (beyond the wheel) a relay
// of 0 ns puts its event behind the instant's others. D at 5 puts E at 15
// before R's turn: E runs before K (had the relay's event been scheduled at
// 0, K would run before E).
TEST(EventQueue, RelaysTakeTheirPlaceWhenTheirTurnComes) {
  struct Hinted : HintedEventHandler {
    EventQueue* q = nullptr;
    std::vector<std::pair<uint32_t, uint64_t>> seen;  // (kind, arg)
    std::vector<Tick> at;
    void HandleEvent(uint32_t kind, uint64_t arg) override {
      seen.push_back({kind, arg});
      at.push_back(q->Now());
      if (arg == 2) q->ScheduleAfter(5, this, kHintedKind | 3, 3);   // B (at t0 + 10) schedules C
      if (arg == 6) q->ScheduleAfter(10, this, kHintedKind | 7, 7);  // D (at t0 + 5) schedules E
    }
  };
  constexpr uint32_t kK = HintedEventHandler::kHintedKind | 7;
  constexpr uint32_t kRelayK = kK | HintedEventHandler::kRelayKind;
  static_assert(kRelayK >= HintedEventHandler::kRelayKind && (kRelayK & ~(1u << 30)) == kK);
  for (Tick base : {Tick{0}, Tick{1} << 20}) {  // the clock at 0; the clock already past the wheel's first turn
    EventQueue q;
    Hinted h;
    h.q = &q;
    if (base > 0) q.ScheduleAt(base - 1, &h, HintedEventHandler::kHintedKind | 9, 9);  // moves the clock near base
    q.RunOne();
    const Tick t0 = q.Now();
    q.ScheduleAt(t0 + 15, &h, HintedEventHandler::kHintedKind | 1, 1);  // A
    q.ScheduleAt(t0 + 10, &h, HintedEventHandler::kHintedKind | 8, 8);  // X: R runs second, from the loaded instant
    q.ScheduleAt(t0 + 10, &h, kRelayK, 5);                              // R: K 5 ns later
    q.ScheduleAt(t0 + 10, &h, HintedEventHandler::kHintedKind | 2, 2);  // B
    q.ScheduleAt(t0 + 5, &h, HintedEventHandler::kHintedKind | 6, 6);   // D
    q.ScheduleAt(t0 + (Tick{1} << 20), &h, kRelayK, 0);                 // far: K at once
    q.ScheduleAt(t0 + (Tick{1} << 20), &h, HintedEventHandler::kHintedKind | 4, 4);
    const uint64_t executed_before = q.Executed();
    q.Run();
    const std::vector<std::pair<uint32_t, uint64_t>> want = {{HintedEventHandler::kHintedKind | 6, 6},
                                                             {HintedEventHandler::kHintedKind | 8, 8},
                                                             {HintedEventHandler::kHintedKind | 2, 2},
                                                             {HintedEventHandler::kHintedKind | 1, 1},
                                                             {HintedEventHandler::kHintedKind | 7, 7},
                                                             {kK, 0},
                                                             {HintedEventHandler::kHintedKind | 3, 3},
                                                             {HintedEventHandler::kHintedKind | 4, 4},
                                                             {kK, 0}};
    const size_t skip = base > 0 ? 1 : 0;  // the clock mover (base 0: none, RunOne ran nothing)
    ASSERT_EQ(h.seen.size(), want.size() + skip) << base;
    EXPECT_EQ((std::vector<std::pair<uint32_t, uint64_t>>(h.seen.begin() + skip, h.seen.end())), want) << base;
    EXPECT_EQ(std::vector<Tick>(h.at.begin() + skip, h.at.end()),
              (std::vector<Tick>{t0 + 5, t0 + 10, t0 + 10, t0 + 15, t0 + 15, t0 + 15, t0 + 15, t0 + (Tick{1} << 20),
                                 t0 + (Tick{1} << 20)}))
        << base;
    EXPECT_EQ(q.Executed() - executed_before, 11u) << base;  // two relays and nine handler calls
  }
}

}  // namespace
}  // namespace orrery
