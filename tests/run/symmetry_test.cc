// A symmetric run (one representative rank) must give exactly the report of
// the full simulation; anything that breaks symmetry must fall back.
#include <gtest/gtest.h>

#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

RunReport RunWith(const TempDir& d, const std::string& symmetry) {
  auto r = testing::RunIn(d, "analytical", symmetry);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : RunReport();
}

void ExpectSame(RunReport a, RunReport b) {
  ASSERT_TRUE(a.symmetric);
  ASSERT_FALSE(b.symmetric);
  a.symmetric = b.symmetric = false;
  a.symmetry_note = b.symmetry_note = "";
  a = orrery::testing::WithoutConfig(a);  // --symmetry differs
  b = orrery::testing::WithoutConfig(b);
  EXPECT_EQ(FormatReportJson(a), FormatReportJson(b));
}

struct Case {
  const char* name;
  const char* network;
  const char* system;
  int npus;
};

// Readable, stable test names in ctest (no byte dump of the struct).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name << " (" << c.npus << " NPUs)"; }

class Symmetry : public ::testing::TestWithParam<Case> {};

TEST_P(Symmetry, RepresentativeRankGivesTheFullReport) {
  const Case c = GetParam();
  TempDir d;
  d.Write("network.yml", c.network);
  d.Write("system.json", c.system);
  DataParallelSpec spec;
  spec.npus = c.npus;
  spec.layers = 3;
  spec.fwd_us = 5;
  spec.bwd_us = 10;
  spec.allreduce_bytes = 3 << 20;
  ASSERT_TRUE(WriteDataParallelTraces(spec, d.File("trace")).ok());
  ExpectSame(RunWith(d, "auto"), RunWith(d, "off"));
  for (int type : {2, 6, 7}) {  // all-gather, all-to-all, reduce-scatter
    TempDir e;
    e.Write("network.yml", c.network);
    e.Write("system.json", c.system);
    ASSERT_TRUE(WriteSingleCollectiveTraces(c.npus, static_cast<CollectiveKind>(type), 1 << 20, e.File("trace")).ok());
    ExpectSame(RunWith(e, "auto"), RunWith(e, "off"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, Symmetry,
    ::testing::Values(
        Case{"ring8", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
             R"({"preferred-dataset-splits": 4, "local-mem-bw": 1600, "all-reduce-implementation": ["ring"],
                 "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
                 "all-to-all-implementation": ["ring"]})",
             8},
        Case{
            "switch16_hd_2chunks",
            "topology: [ Switch ]\nnpus_count: [ 16 ]\nbandwidth: [ 400 ]\nlatency: [ 936.25 ]\n",
            R"({"preferred-dataset-splits": 4, "active-chunks-per-dimension": 2, "local-mem-bw": 3350, "endpoint-delay": 1,
                 "all-reduce-implementation": ["halvingDoubling"], "all-gather-implementation": ["halvingDoubling"],
                 "reduce-scatter-implementation": ["halvingDoubling"], "all-to-all-implementation": ["direct"]})",
            16},
        Case{"ring4_switch4_localbw",
             "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n",
             R"({"preferred-dataset-splits": 4, "local-mem-bw": 1600, "collective-optimization": "localBWAware",
                 "all-reduce-implementation": ["ring", "ring"], "all-gather-implementation": ["ring", "ring"],
                 "reduce-scatter-implementation": ["ring", "ring"], "all-to-all-implementation": ["ring", "direct"]})",
             16},
        Case{"ring2_fc4_switch4_mixed",
             "topology: [ Ring, FullyConnected, Switch ]\nnpus_count: [ 2, 4, 4 ]\nbandwidth: [ 200, 100, 50 "
             "]\nlatency: [ 100, 300, 1000 ]\n",
             R"({"preferred-dataset-splits": 2, "scheduling-policy": "FIFO", "local-mem-bw": 1600,
                 "collective-optimization": "baseline",
                 "all-reduce-implementation": ["ring", "direct", "halvingDoubling"],
                 "all-gather-implementation": ["ring", "direct4", "halvingDoubling"],
                 "reduce-scatter-implementation": ["ring", "direct", "halvingDoubling"],
                 "all-to-all-implementation": ["ring", "direct", "direct"]})",
             32}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(SymmetryFallback, ADifferentTraceOnOneRankMeansAFullRun) {
  TempDir d;
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 2})");
  // Rank 2 has an extra metadata node (a differing collective would be bad input).
  testing::WriteTraces(d, 4, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes{testing::CollNode(0, 0, 1 << 20)};
    if (r == 2) nodes.push_back(testing::MakeNode(1, ChakraProtoMsg::METADATA_NODE));
    return nodes;
  });
  RunReport r = RunWith(d, "auto");
  EXPECT_FALSE(r.symmetric);
  EXPECT_NE(r.symmetry_note.find("rank 2's trace differs"), std::string::npos) << r.symmetry_note;
}

TEST(SymmetryFallback, CongestionAwareAndDoubleBinaryTreeAreFullRuns) {
  TempDir d;
  d.Write("network.yml", "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"all-reduce-implementation": ["doubleBinaryTree"]})");
  ASSERT_TRUE(WriteSingleCollectiveTraces(8, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
  RunReport r = RunWith(d, "auto");
  EXPECT_FALSE(r.symmetric);
  EXPECT_NE(r.symmetry_note.find("double binary tree"), std::string::npos) << r.symmetry_note;
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  d.Write("system2.json", R"({"all-reduce-implementation": ["ring"]})");
  c.files.system = d.File("system2.json");
  c.run.backend = "congestion-aware";
  auto a = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->symmetric);
}

}  // namespace
}  // namespace orrery
