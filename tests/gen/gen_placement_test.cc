// Where the parallel axes fall on the network: printed from the order, and
// set with --place (the order follows from it; a dimension must hold exactly
// the axes placed on it).
#include <gtest/gtest.h>

#include "gen/gen_args.h"
#include "gen/gen_source.h"
#include "gen/placement.h"
#include "gen/strategy.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

Dim D(Block b, int npus) {
  Dim d;
  d.block = b;
  d.npus = npus;
  d.bandwidth_gbps = 50;
  d.latency_ns = 500;
  return d;
}

const std::array<Axis, kNumAxes> kMegatron{Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};

TEST(GenPlacement, DescribesWhichDimensionsEachAxisSpans) {
  // tp 8, dp 16, pp 8 on Ring(8) x Switch(128): tp fills dim0; dp and pp share dim1.
  const Layout l({8, 1, 1, 16, 8}, kMegatron);
  const auto lines = DescribePlacement(l, {D(Block::kRing, 8), D(Block::kSwitch, 128)});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "tp -> dim0 Ring (all 8 NPUs)");
  EXPECT_EQ(lines[1], "dp -> dim1 Switch (16 of 128 NPUs, stride 8)");
  EXPECT_EQ(lines[2], "pp -> dim1 Switch (8 of 128 NPUs, stride 128)");
  // dp inner on Switch(4) x Switch(4): dp 8 spans both dimensions... with tp 2 outer.
  const Layout l2({2, 1, 1, 8, 1}, {Axis::kDp, Axis::kTp, Axis::kCp, Axis::kEp, Axis::kPp});
  const auto lines2 = DescribePlacement(l2, {D(Block::kSwitch, 4), D(Block::kSwitch, 4)});
  EXPECT_EQ(lines2[0], "tp -> dim1 Switch (2 of 4 NPUs, stride 8)");
  EXPECT_EQ(lines2[1], "dp -> dim0 Switch + dim1 Switch (8 of 16 NPUs, stride 1)");
}

TEST(GenPlacement, PlaceSetsTheOrder) {
  const std::vector<Dim> dims = {D(Block::kRing, 8), D(Block::kSwitch, 16), D(Block::kSwitch, 8)};
  auto order = OrderFromPlacement("pp:2,tp:0,dp:1", {8, 1, 1, 16, 8}, dims);
  ASSERT_TRUE(order.ok()) << order.status().message();
  EXPECT_EQ(order.value()[0], Axis::kTp);
  EXPECT_EQ(order.value()[1], Axis::kDp);
  EXPECT_EQ(order.value()[2], Axis::kPp);
  // Two axes on one dimension, innermost as listed: dp 2 then tp 4 on dim0 (8 NPUs).
  auto shared = OrderFromPlacement("dp:0,tp:0,pp:1", {4, 1, 1, 2, 2}, {D(Block::kRing, 8), D(Block::kRing, 2)});
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  const Layout l({4, 1, 1, 2, 2}, shared.value());
  EXPECT_EQ(l.GroupRanks(0, Axis::kDp), (std::vector<int>{0, 1}));
  EXPECT_EQ(l.GroupRanks(0, Axis::kTp), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(l.GroupRanks(0, Axis::kPp), (std::vector<int>{0, 8}));
  // An axis alone across two dimensions.
  auto span = OrderFromPlacement("tp:0,dp:1-2", {8, 1, 1, 128, 1}, dims);
  ASSERT_TRUE(span.ok()) << span.status().message();
  EXPECT_EQ(span.value()[1], Axis::kDp);
}

TEST(GenPlacement, BadPlacementsNameTheDimensionAndNumbers) {
  const std::vector<Dim> dims = {D(Block::kRing, 8), D(Block::kSwitch, 16), D(Block::kSwitch, 8)};
  const std::array<int64_t, kNumAxes> sizes{8, 1, 1, 16, 8};
  struct Case {
    const char* spec;
    const char* message;
  };
  const Case cases[] = {
      {"tp:0,pp:1,dp:2",
       "--place = tp:0,pp:1,dp:2: dim1 Switch has 16 NPUs but the axes placed on it (pp) multiply to 8"},
      {"tp:0,dp:1", "axis pp (size 8) has no dimension"},
      {"tp:0,dp:1,pp:3", "--place pp = \"3\": out of range; allowed: an integer >= 0 and <= 2"},
      {"tp:0,dp:1,xp:2", "unknown axis 'xp'"},
      {"tp:0,dp:1,tp:2", "axis 'tp' placed twice"},
      {"tp0,dp:1,pp:2", "'tp0' has no ':'"},
      {"tp:0,dp:1-2,pp:2", "axis dp has size 16 but dimensions 1..2 hold 128 NPUs"},
  };
  for (const Case& c : cases) {
    auto r = OrderFromPlacement(c.spec, sizes, dims);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_EQ(r.status().exit_code(), 2);
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
  // --place without a network, or with --order.
  auto args = ParseGenArgs({"--model=gpt3-175b", "--tp=8", "--place=tp:0"});
  ASSERT_TRUE(args.ok());
  std::vector<Dim> got;
  Status st = ResolvePlacement(&args.value(), &got);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--place = tp:0: needs the network"), std::string::npos) << st.message();
  auto both = ParseGenArgs(
      {"--model=gpt3-175b", "--tp=8", "--order=dp-tp-cp-ep-pp", "--network=Ring(8,50GB/s,1us)", "--place=tp:0"});
  ASSERT_TRUE(both.ok());
  st = ResolvePlacement(&both.value(), &got);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--order is given too"), std::string::npos) << st.message();
}

// The same strategy placed two ways on Ring(2, fast) x Ring(2, slow): with
// 16 microbatches the TP all-reduces (4 per layer and microbatch, 48 layers,
// s·h·2 = 25 MB each: 77 GB) outweigh the DP gradients (2 bytes per parameter
// of a TP half, 22 GB), so TP on the fast dimension finishes sooner; the run
// sees the placement through run --generate.
TEST(GenPlacement, TwoPlacementsOfOneStrategySimulateDifferently) {
  orrery::testing::TempDir d;
  d.Write("system.json", R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000})");
  const std::string net = "Ring(2,400GB/s,100ns)_Ring(2,10GB/s,5us)";
  auto run = [&](const std::string& place) {
    auto source = GeneratedSource(
        "--model=megatron-22b --tp=2 --dp=2 --microbatches=16 --allow-over-capacity --place=" + place, net);
    EXPECT_TRUE(source.ok()) << source.status().message();
    RunConfig c;
    c.files.system = d.File("system.json");
    c.files.network = net;
    c.source = source.value();
    auto r = RunSimulation(c, DefaultBackends());
    EXPECT_TRUE(r.ok()) << r.status().message();
    return orrery::testing::MaxFinished(r.value());
  };
  const Tick tp_fast = run("tp:0,dp:1"), tp_slow = run("dp:0,tp:1");
  EXPECT_LT(tp_fast, tp_slow);
  // The network given inside --generate is refused: the run's network is the one.
  auto bad = GeneratedSource("--model=megatron-22b --tp=2 --dp=2 --network=x.yml", net);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("leave it out"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace orrery::gen
