// GenerateDense's cooperative stop (the search's --time-limit reaching a
// candidate's generation): looked at before each stage and each microbatch
// pass, never per node; a stop that never fires changes nothing; one that
// fires ends the generation with the place it stopped.
#include <gtest/gtest.h>

#include <chrono>

#include "gen/strategy.h"
#include "run/build.h"
#include "tests/gen/gen_test_util.h"

namespace orrery::gen {
namespace {

// pp 2, m 3, 1F1B on the tiny model: each stage runs 2·m = 6 passes.
Strategy TwoStages() {
  Strategy s;
  s.pp = 2, s.npus = 2, s.microbatches = 3;
  return s;
}

TEST(GenStop, LookedAtBeforeEachStageAndPassOnly) {
  const ModelDesc m = testing::TinyModel(4, 32);
  const Strategy s = TwoStages();
  auto plain = GenerateDense(m, s);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  int looks = 0;
  auto watched = GenerateDense(m, s, [&looks] {
    ++looks;
    return false;
  });
  ASSERT_TRUE(watched.ok()) << watched.status().message();
  // Per stage: once before it, once before each of its 2·3 passes.
  EXPECT_EQ(looks, 2 * (1 + 2 * 3));
  ASSERT_EQ(watched->classes.size(), plain->classes.size());
  for (size_t c = 0; c < plain->classes.size(); ++c) {
    const auto& a = plain->classes[c].nodes();
    const auto& b = watched->classes[c].nodes();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].name, b[i].name);
      EXPECT_EQ(a[i].deps, b[i].deps);
    }
  }
}

TEST(GenStop, FiringEndsTheGenerationNamingWhere) {
  const ModelDesc m = testing::TinyModel(4, 32);
  const Strategy s = TwoStages();
  // Already set: nothing is generated.
  auto now = GenerateDense(m, s, [] { return true; });
  ASSERT_FALSE(now.ok());
  EXPECT_EQ(now.status().exit_code(), 1);
  EXPECT_EQ(now.status().message(), "generation stopped before stage 0 of 2's graph");
  // On the 5th look: stage 0 (1F1B, one warm-up forward) runs F0 F1 B0 F2 B1
  // B2, looked at before it (1), F0 (2), F1 (3), B0 (4), F2 (5).
  int looks = 0;
  auto later = GenerateDense(m, s, [&looks] { return ++looks == 5; });
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().message(), "generation stopped at stage 0 of 2, before microbatch 2's forward");
  EXPECT_EQ(looks, 5);  // not looked at again once it fired
  // Interleaved:2, m 4: per stage m·V = 8 forwards and 8 backwards, so stage
  // 0 takes looks 1–17; stage 1 (its warm-up: (p − 1 − 1)·2 + (V − 1)·p = 2
  // forwards, of microbatches 0 and 1) is looked at before it (18), before
  // microbatch 0's forward (19) and microbatch 1's (20).
  Strategy v = s;
  v.schedule = Schedule::kInterleaved, v.chunks = 2, v.microbatches = 4;
  int all = 0;
  auto counted = GenerateDense(m, v, [&all] {
    ++all;
    return false;
  });
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  EXPECT_EQ(all, 2 * (1 + 2 * 4 * 2));
  looks = 0;
  auto inter = GenerateDense(m, v, [&looks] { return ++looks == 20; });
  ASSERT_FALSE(inter.ok());
  EXPECT_EQ(inter.status().message(), "generation stopped at stage 1 of 2, before microbatch 1's forward");
}

// The search's stop (run/build.h, RunStop::Fire) as the generation's: a
// deadline already past stops it and marks the stop as fired; an inactive
// one never fires.
TEST(GenStop, RunStopWithADeadlinePastStopsTheGeneration) {
  const ModelDesc m = testing::TinyModel(4, 32);
  RunStop past;
  past.has_deadline = true;
  past.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto w = GenerateDense(m, TwoStages(), [&past] { return past.Fire(); });
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "generation stopped before stage 0 of 2's graph");
  EXPECT_TRUE(past.stopped);
  RunStop none;
  EXPECT_TRUE(GenerateDense(m, TwoStages(), [&none] { return none.Fire(); }).ok());
  EXPECT_FALSE(none.stopped);
}

}  // namespace
}  // namespace orrery::gen
