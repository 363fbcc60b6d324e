// `orrery trace gen-dp --straggler=RANK [--straggler-percent=P]`: one rank of the
// data-parallel loop computes P % longer (issue 13's straggler benchmark). The
// straggler's compute is derived by hand; the class path (which splits or
// falls back) must give every rank the full engine's numbers.
#include <gtest/gtest.h>

#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

RunReport RunLoop(const TempDir& d, const std::string& symmetry) {
  auto r = testing::RunIn(d, "analytical", symmetry);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : RunReport();
}

struct Net {
  const char* name;
  const char* network;
  const char* system;
};
// Readable test names in ctest.
void PrintTo(const Net& n, std::ostream* os) { *os << n.name; }

class StragglerLoop : public ::testing::TestWithParam<Net> {};

TEST_P(StragglerLoop, SlowRankComputesLongerAndClassesEqualFullEngine) {
  TempDir d;
  d.Write("network.yml", GetParam().network);
  d.Write("system.json", GetParam().system);
  DataParallelSpec spec;
  spec.npus = 16;
  spec.layers = 3;
  spec.fwd_us = 500;
  spec.bwd_us = 1000;
  spec.allreduce_bytes = 1 << 20;
  spec.slow_rank = 5;
  spec.slow_percent = 20;
  ASSERT_TRUE(WriteDataParallelTraces(spec, d.File("trace")).ok());
  const RunReport off = RunLoop(d, "off");
  const RunReport cls = RunLoop(d, "auto");
  ASSERT_EQ(off.per_npu.size(), 16u);
  ASSERT_EQ(cls.per_npu.size(), 16u);
  // By hand: three layers, forward 500 us and backward 1000 us each; rank 5
  // 20 % longer: 3 * (600 + 1200) us.
  for (const NpuReport& n : off.per_npu) {
    EXPECT_EQ(n.compute_ns, n.rank == 5 ? 5'400'000u : 4'500'000u) << n.rank;
  }
  // Every rank waits for the straggler's last all-reduce: it cannot finish
  // before the straggler's compute is done.
  for (const NpuReport& n : off.per_npu) EXPECT_GT(n.finished_ns, 5'400'000u) << n.rank;
  EXPECT_FALSE(off.symmetric);
  EXPECT_FALSE(cls.symmetric) << cls.symmetry_note;
  for (size_t r = 0; r < off.per_npu.size(); ++r) {
    const NpuReport& a = off.per_npu[r];
    const NpuReport& b = cls.per_npu[r];
    EXPECT_EQ(a.finished_ns, b.finished_ns) << r;
    EXPECT_EQ(a.compute_ns, b.compute_ns) << r;
    EXPECT_EQ(a.comm_ns, b.comm_ns) << r;
    EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns) << r;
    EXPECT_EQ(a.peer_wait_ns, b.peer_wait_ns) << r;
    EXPECT_EQ(a.idle_ns, b.idle_ns) << r;
  }
  EXPECT_EQ(off.messages, cls.messages);
}

INSTANTIATE_TEST_SUITE_P(
    Networks, StragglerLoop,
    ::testing::Values(
        Net{"Switch16_hd", "topology: [ Switch ]\nnpus_count: [ 16 ]\nbandwidth: [ 50 ]\nlatency: [ 1000 ]\n",
            R"({"preferred-dataset-splits": 4, "endpoint-delay": 10, "local-mem-bw": 1600,
                "all-reduce-implementation": ["halvingDoubling"], "all-gather-implementation": ["halvingDoubling"],
                "reduce-scatter-implementation": ["halvingDoubling"], "all-to-all-implementation": ["direct"]})"},
        Net{"Switch4xSwitch4_ring",
            "topology: [ Switch, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 936.25, 1000 ]\n",
            R"({"preferred-dataset-splits": 4, "endpoint-delay": 10, "local-mem-bw": 1600,
                "all-reduce-implementation": ["ring", "ring"], "all-gather-implementation": ["ring", "ring"],
                "reduce-scatter-implementation": ["ring", "ring"], "all-to-all-implementation": ["ring", "ring"]})"}),
    [](const ::testing::TestParamInfo<Net>& i) { return std::string(i.param.name); });

TEST(StragglerLoop, WithoutStragglerEveryRankComputesAlike) {
  TempDir d;
  DataParallelSpec spec;
  spec.npus = 4;
  spec.layers = 2;
  d.Write("network.yml", "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 1000 ]\n");
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  ASSERT_TRUE(WriteDataParallelTraces(spec, d.File("trace")).ok());
  const RunReport r = RunLoop(d, "off");
  ASSERT_EQ(r.per_npu.size(), 4u);
  for (const NpuReport& n : r.per_npu) EXPECT_EQ(n.compute_ns, 3'000'000u) << n.rank;  // 2 * (500 + 1000) us
}

TEST(StragglerLoop, BadStragglerFlagsExitTwoNamingTheValue) {
  TempDir d;
  const std::string out = " --out=" + d.File("t");
  struct Bad {
    std::string args, message;
  };
  const std::vector<Bad> bad = {
      {"--npus=8 --straggler=8", "--straggler = 8: not a rank of 8 NPUs (allowed: 0..7)"},
      {"--npus=8 --straggler=-2", "--straggler = \"-2\""},
      {"--npus=8 --fwd-us=333 --straggler=2 --straggler-percent=7",
       "--straggler-percent = 7: --fwd-us 333 us made that much longer is not a whole number of microseconds"},
      {"--npus=8 --straggler=2 --straggler-percent=1001", "--straggler-percent = \"1001\""},
      {"--npus=8 --straggler-percent=30", "--straggler-percent = 30 needs --straggler=RANK"},
  };
  for (const Bad& b : bad) {
    std::string err;
    EXPECT_EQ(testing::RunCli("trace gen-dp " + b.args + out, &err), 2) << b.args;
    EXPECT_NE(err.find(b.message), std::string::npos) << b.args << "\n" << err;
  }
  std::string err;
  EXPECT_EQ(testing::RunCli("trace gen-dp --npus=8 --layers=1 --straggler=7" + out, &err), 0) << err;
}

}  // namespace
}  // namespace orrery
