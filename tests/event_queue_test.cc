#include <gtest/gtest.h>

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
