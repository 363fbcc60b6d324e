#include <gtest/gtest.h>

#include "gen/toy_traces.h"
#include "system/themis.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

TEST(Themis, HandWorkedOrder) {
  // Two dimensions of 2 NPUs, equal bandwidth 1 B/ns, chunks of 8 bytes.
  std::vector<ThemisDim> dims = {{2, 1.0}, {2, 1.0}};
  std::vector<double> load = {0, 0};
  // Chunk 0: tie -> dim 0 first; dim 0 gets 2*(1/2)*8 = 8, dim 1 gets 2*(1/2)*4 = 4.
  EXPECT_EQ(ThemisOrder(dims, {0, 1}, 8, &load), (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(load[0], 8);
  EXPECT_DOUBLE_EQ(load[1], 4);
  // Chunk 1: dim 1 is less loaded, so it takes the full chunk: 4 + 8 = 12; dim 0: 8 + 4 = 12.
  EXPECT_EQ(ThemisOrder(dims, {0, 1}, 8, &load), (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(load[0], 12);
  EXPECT_DOUBLE_EQ(load[1], 12);
  // Chunk 2: tie again -> dim 0 first.
  EXPECT_EQ(ThemisOrder(dims, {0, 1}, 8, &load), (std::vector<int>{0, 1}));
  // A faster dimension absorbs more: bandwidth 4 vs 1.
  std::vector<ThemisDim> fast = {{2, 1.0}, {2, 4.0}};
  std::vector<double> l2 = {0, 0};
  ThemisOrder(fast, {0, 1}, 8, &l2);                                       // loads 8 and 1
  EXPECT_EQ(ThemisOrder(fast, {0, 1}, 8, &l2), (std::vector<int>{1, 0}));  // 1 < 8
}

TEST(Themis, BalancesAThreeDimensionalSystem) {
  testing::TempDir d;
  ASSERT_TRUE(WriteSingleCollectiveTraces(64, CollectiveKind::kAllReduce, 1 << 30, d.File("trace")).ok());
  Tick finished[2];
  double spread[2];
  for (int k = 0; k < 2; ++k) {
    d.Write("system.json", std::string(R"({"preferred-dataset-splits": 64, "local-mem-bw": 1600,
      "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring", "ring"],
      "inter-dimension-scheduling": ")") +
                               (k ? "themis" : "baseline") + "\"}");
    RunConfig c;
    c.files.workload_prefix = d.File("trace");
    c.files.network = "Ring(4,200GB/s,500ns)_Ring(4,100GB/s,500ns)_Ring(4,50GB/s,500ns)";
    c.files.system = d.File("system.json");
    auto r = RunSimulation(c, DefaultBackends());
    ASSERT_TRUE(r.ok()) << r.status().message();
    finished[k] = testing::MaxFinished(r.value());
    double lo = 1, hi = 0;
    for (const auto& dim : r->dims) {
      const double u = static_cast<double>(dim.busy_ns) / (64.0 * static_cast<double>(finished[k]));
      lo = std::min(lo, u);
      hi = std::max(hi, u);
    }
    spread[k] = hi - lo;
  }
  EXPECT_LT(finished[1], finished[0]);  // themis is faster
  EXPECT_LT(spread[1], spread[0] / 4);  // and uses the dimensions far more evenly
}

TEST(IntraDimension, SmallestFirstIsAcceptedAndKeepsSingleDimensionOrder) {
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, 50, 500));
  ASSERT_TRUE(WriteSingleCollectiveTraces(8, CollectiveKind::kReduceScatter, 1 << 20, d.File("trace")).ok());
  Tick t[2];
  for (int k = 0; k < 2; ++k) {
    d.Write("system.json", testing::SystemJson("ring", 4, 10, 1600, 1,
                                               std::string(", \"intra-dimension-scheduling\": \"") +
                                                   (k ? "SmallestFirst" : "FIFO") + "\""));
    auto r = testing::RunIn(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    t[k] = testing::MaxFinished(r.value());
  }
  EXPECT_EQ(t[0], t[1]);
}

}  // namespace
}  // namespace orrery
