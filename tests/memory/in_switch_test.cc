// In-network collectives on a reduction-capable Switch dimension.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

Result<RunReport> RunColl(const TempDir& d, const std::string& net, const std::string& algo, int type, uint64_t bytes,
                          int npus, const std::string& extra = ", \"in-switch-reduction-bw\": 400") {
  d.Write("system.json", std::string(R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "all-reduce-implementation": [")") +
                             algo + R"("], "reduce-scatter-implementation": [")" + algo +
                             R"("], "all-gather-implementation": [")" + algo +
                             R"("], "all-to-all-implementation": [")" + algo + "\"]" + extra + "}");
  EXPECT_TRUE(WriteSingleCollectiveTraces(npus, static_cast<CollectiveKind>(type), bytes, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = net;
  c.files.system = d.File("system.json");
  return RunSimulation(c, DefaultBackends());
}

TEST(InSwitch, AllReduceIsOneUploadOneDownloadPlusTheReduction) {
  const int p = 8;
  const uint64_t S = 8 << 20;
  const double bw = GiBpsToBytesPerNs(100), lat = 1000, red_bw = 400;
  TempDir a, b;
  auto in = RunColl(a, "Switch(8,100GB/s,1us)", "inSwitch", 0, S, p);
  ASSERT_TRUE(in.ok()) << in.status().message();
  const Tick want = 10 + T(lat + S / bw) + T(S * (p - 1) / red_bw) + T(lat + S / bw) + 10;
  for (const auto& n : in->per_npu) EXPECT_EQ(n.finished_ns, want) << "rank " << n.rank;
  EXPECT_EQ(in->collectives.at(0).algorithm, "ALL_REDUCE:inSwitch");
  EXPECT_EQ(in->dims[0].bytes, 2u * p * S);  // each NPU: the payload up once and down once
  // The ring on the same switch moves 2(p-1)/p of the payload per NPU in 2(p-1) steps.
  auto ring = RunColl(b, "Switch(8,100GB/s,1us)", "ring", 0, S, p);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->dims[0].bytes, 2u * (p - 1) * S);  // 2(p-1) messages of S/p per NPU, p NPUs
  // Store-and-forward at the switch: for a bandwidth-bound 8 MiB the ring's pipelined steps win;
  // for a latency-bound 64 KiB the two link crossings beat the ring's 2(p-1) steps.
  EXPECT_GT(in->per_npu[0].finished_ns, ring->per_npu[0].finished_ns);
  TempDir c, e;
  auto small_in = RunColl(c, "Switch(8,100GB/s,1us)", "inSwitch", 0, 64 << 10, p);
  auto small_ring = RunColl(e, "Switch(8,100GB/s,1us)", "ring", 0, 64 << 10, p);
  ASSERT_TRUE(small_in.ok() && small_ring.ok());
  EXPECT_LT(4 * small_in->per_npu[0].finished_ns, small_ring->per_npu[0].finished_ns);
}

TEST(InSwitch, ReduceScatterAndAllGather) {
  const int p = 4;
  const uint64_t S = 4 << 20;
  const double bw = GiBpsToBytesPerNs(50), lat = 500;
  TempDir a, b;
  auto rs = RunColl(a, "Switch(4,50GB/s,500ns)", "inSwitch", 7, S, p);
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ(rs->per_npu[2].finished_ns, 10 + T(lat + S / bw) + T(S * (p - 1) / 400.0) + T(lat + (S / p) / bw) + 10);
  auto ag = RunColl(b, "Switch(4,50GB/s,500ns)", "inSwitch", 2, S, p);
  ASSERT_TRUE(ag.ok()) << ag.status().message();
  EXPECT_EQ(ag->per_npu[2].finished_ns, 10 + T(lat + S / bw) + T(lat + (S * p) / bw) + 10);
}

TEST(InSwitch, OnASecondDimensionOfAHierarchy) {
  TempDir d;
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 2, "local-mem-bw": 1600,
    "collective-optimization": "localBWAware", "in-switch-reduction-bw": 400,
    "all-reduce-implementation": ["ring", "inSwitch"], "reduce-scatter-implementation": ["ring", "inSwitch"],
    "all-gather-implementation": ["ring", "inSwitch"]})");
  ASSERT_TRUE(WriteSingleCollectiveTraces(16, CollectiveKind::kAllReduce, 4 << 20, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = "Ring(4,200GB/s,100ns)_Switch(4,50GB/s,1us)";
  c.files.system = d.File("system.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collectives.at(0).algorithm, "REDUCE_SCATTER:ring,ALL_REDUCE:inSwitch,ALL_GATHER:ring");
  for (const auto& n : r->per_npu) EXPECT_EQ(n.finished_ns, r->per_npu[0].finished_ns);
}

TEST(InSwitch, BadConfigurations) {
  {
    TempDir d;
    auto r = RunColl(d, "Ring(8,100GB/s,1us)", "inSwitch", 0, 1 << 20, 8);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(
                  "\"inSwitch\" on dimension 0, which is a Ring; in-switch collectives need a Switch"),
              std::string::npos)
        << r.status().message();
  }
  {
    TempDir d;
    auto r = RunColl(d, "Switch(8,100GB/s,1us)", "inSwitch", 0, 1 << 20, 8, "");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("needs \"in-switch-reduction-bw\""), std::string::npos) << r.status().message();
  }
  {
    TempDir d;
    auto r = RunColl(d, "Switch(8,100GB/s,1us)", "inSwitch", 6, 1 << 20, 8);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("in-switch collectives are all-reduce, reduce-scatter and all-gather"),
              std::string::npos)
        << r.status().message();
  }
  {
    TempDir d;
    auto r = RunColl(d, "Switch(8,100GB/s,1us)", "inSwitch", 0, 1 << 20, 8, ", \"in-switch-reduction-bw\": 0");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("in-switch-reduction-bw = 0: out of range; allowed: a number >= 0.001"),
              std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace orrery
