// The search's lower bound (SymbolicCost::lower_s, docs/generator.md,
// "Lower bound") against the simulation, exhaustively: every survivor of
// small search spaces (every tp/cp/ep/dp/pp, microbatch size, schedule, SP,
// recomputation, ZeRO stage and rank order the enumeration yields, twins not
// merged) is simulated, and none may finish before its bound. The larger
// spaces: bench/search_bound.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "explore/search.h"
#include "explore/search_run.h"
#include "tests/explore/search_bound_util.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

// 4 layers, s 32, h 64, 4 heads, global batch 8, microbatches of 1 or 2:
// the dense spaces on 8 NPUs, over one Switch and over a Ring below a
// Switch, compute and communication of the same order (1 TFLOP/s, 1-4 GiB/s
// links). And on Switch(2) x Switch(4) under the hierarchical model, where a
// grid over both dimensions that holds part of the Switch(4) (dp 4
// innermost: both NPUs of dimension 0 and 2 of the Switch's 4) runs per
// dimension over its members along each (RunsPerDimension).
TEST(SearchBound, EverySurvivorOnEightNpus) {
  BoundSpace b;
  b.model = testing::TinyModel(4, 32);
  b.npus = 8;
  b.global_batch = 8;
  b.microbatch_sizes = {1, 2};
  const std::pair<const char*, const char*> cases[] = {
      {"Switch(8,2GB/s,1us)", ""},
      {"Ring(2,4GB/s,500ns)_Switch(4,1GB/s,2us)", ""},
      {"Switch(2,4GB/s,500ns)_Switch(4,1GB/s,2us)", R"(, "group-collective-model": "hierarchical")"}};
  for (const auto& [net, extra] : cases) {
    SCOPED_TRACE(net);
    b.network = net;
    b.system_extra = extra;
    const BoundCheck r = CheckEverySurvivor(b);
    EXPECT_EQ(r.violations, "");
    EXPECT_GT(r.simulated, 1000u);  // the space is not empty
    EXPECT_GT(r.tightest, 0.9);     // nor the bound vacuous: within 10 % of some candidate's time
  }
}

// The system layer's settings the bound reads, on 4 NPUs (Ring(2) below
// Switch(2)): the defaults (where tp 4 runs over both dimensions: the old
// bound, charging its bytes on the slower one, was above 18 candidates'
// simulated times), chunks running side by side (active-chunks-per-dimension 2, 4
// chunks: at least 2 after one another), SmallestFirst (one chunk), the
// hierarchical group model, and collectives that are not rings (the bound
// then counts none).
TEST(SearchBound, EverySurvivorUnderOtherSystemSettings) {
  BoundSpace b;
  b.model = testing::TinyModel(4, 32);
  b.npus = 4;
  b.global_batch = 8;
  b.network = "Ring(2,4GB/s,500ns)_Switch(2,1GB/s,2us)";
  for (const char* extra :
       {"", R"(, "active-chunks-per-dimension": 2)", R"(, "intra-dimension-scheduling": "SmallestFirst")",
        R"(, "group-collective-model": "hierarchical")", R"(, "all-reduce-implementation": ["direct", "direct"])"}) {
    SCOPED_TRACE(extra);
    b.system_extra = extra;
    const BoundCheck r = CheckEverySurvivor(b);
    EXPECT_EQ(r.violations, "");
    EXPECT_GT(r.simulated, 1000u);
  }
}

// The TP collectives' term by hand: 1 layer, b 1, m 1, compute free (10^30
// FLOP/s), so the bound is 4 all-reduces (2 blocks · 2 passes) of b·s·h·2 =
// 4,096 B, less 1 ns for each message step and for the 6 compute nodes (1
// layer · 2 passes · 2 + 2 logits), times 1 − 10^-12. tp 2 on Switch(2,
// 1 GiB/s, 1 us), 4 splits, endpoint delay 10 ns: chunks of 1,024 B, a
// ring of 2 steps of 512 B, each 2 hops · 1 us + 10 ns + 512 B at 2^30 B/s.
// One active chunk: the 4 chunks one after another, 32 steps; 2 active: at
// least 2, 16 steps; SmallestFirst: 1 chunk, 8 steps; no ring: none.
TEST(SearchBound, CollectivesByHand) {
  const double gib = 1073741824.0, margin = 1 - 1e-12;
  const ModelDesc m = testing::TinyModel(1, 32);
  Strategy s;
  s.tp = 2, s.npus = 2;
  ASSERT_TRUE(ValidateStrategy(m, s).ok());
  CostModel c{1e30, 0, {Dim{Block::kSwitch, 2, 1.0, 1000, 1}}, 4, 10e-9};
  EXPECT_NEAR(EstimateCost(m, s, c).lower_s, (32 * 2010e-9 + 32 * 512 / gib - 38e-9) * margin, 1e-15);
  c.active_chunks = 2;
  EXPECT_NEAR(EstimateCost(m, s, c).lower_s, (16 * 2010e-9 + 16 * 512 / gib - 22e-9) * margin, 1e-15);
  c.active_chunks = 1, c.chunks_by_priority = false;
  EXPECT_NEAR(EstimateCost(m, s, c).lower_s, (8 * 2010e-9 + 8 * 512 / gib - 14e-9) * margin, 1e-15);
  c.chunks_by_priority = true, c.ring_collectives = false;
  EXPECT_EQ(EstimateCost(m, s, c).lower_s, 0);
  // tp 4 over the whole network, Ring(2, 4 GiB/s, 500 ns) × Switch(2, 1
  // GiB/s, 2 us): one phase per dimension (the old bound charged all 4 ranks'
  // bytes on the slower one), of one chunk: messages of 1,024/4 = 256 B, 2
  // steps on each: 2·(500 + 10) ns + 2·256 B at 4 GiB/s, 2·(4,000 + 10) ns +
  // 2·256 B at 1 GiB/s; the same under the hierarchical model.
  s.tp = 4, s.npus = 4;
  c = CostModel{1e30, 0, {Dim{Block::kRing, 2, 4.0, 500, 1}, Dim{Block::kSwitch, 2, 1.0, 2000, 1}}, 4, 10e-9};
  const double ar = 2 * 510e-9 + 2 * 256 / (4 * gib) + 2 * 4010e-9 + 2 * 256 / gib;
  EXPECT_NEAR(EstimateCost(m, s, c).lower_s, (4 * ar - 22e-9) * margin, 1e-15);
  c.hierarchical_groups = true;
  EXPECT_NEAR(EstimateCost(m, s, c).lower_s, (4 * ar - 22e-9) * margin, 1e-15);
}

// A MoE model (4 experts, top 2, every other layer): ep enumerated too.
TEST(SearchBound, EverySurvivorOfAMoeModel) {
  BoundSpace b;
  b.model = testing::TinyModel(4, 32);
  b.model.experts = 4;
  b.model.top_k = 2;
  b.model.expert_ffn = 128;
  b.model.moe_layer_freq = 2;
  b.npus = 8;
  b.global_batch = 8;
  b.microbatch_sizes = {1};
  b.network = "Switch(2,4GB/s,500ns)_Ring(4,1GB/s,1us)";
  const BoundCheck r = CheckEverySurvivor(b);
  EXPECT_EQ(r.violations, "");
  EXPECT_GT(r.simulated, 1000u);
  EXPECT_GT(r.with_ep, 500u);
}

}  // namespace
}  // namespace orrery::gen
