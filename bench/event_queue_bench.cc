// Push/pop throughput of the event kernel.
#include <benchmark/benchmark.h>

#include "core/event_queue.h"

namespace {

struct Sink : orrery::EventHandler {
  uint64_t sum = 0;
  void HandleEvent(uint32_t, uint64_t arg) override { sum += arg; }
};

void BM_PushPop(benchmark::State& state) {
  const int64_t pending = state.range(0);
  orrery::EventQueue q;
  Sink s;
  uint64_t x = 1;
  for (int64_t i = 0; i < pending; ++i) q.ScheduleAfter((x = x * 6364136223846793005ull + 1) >> 50, &s, 0, 1);
  for (auto _ : state) {
    q.ScheduleAfter((x = x * 6364136223846793005ull + 1) >> 50, &s, 0, 1);
    q.RunOne();
  }
  benchmark::DoNotOptimize(s.sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PushPop)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

}  // namespace
