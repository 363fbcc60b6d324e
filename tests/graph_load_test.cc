// Reading a rank's trace into its graph (workload/graph.cc) and reading many
// ranks on several threads (workload/build.cc): the graph's shape by hand, and
// the same report and the same first error for any number of threads.
#include <gtest/gtest.h>

#include "extern/et_io.h"
#include "tests/test_util.h"
#include "workload/graph.h"
#include "workload/simulation.h"

namespace orrery {
namespace {

using testing::TempDir;

ChakraProtoMsg::Node Comp(uint64_t id, std::vector<uint64_t> data, std::vector<uint64_t> ctrl = {}) {
  ChakraProtoMsg::Node n = testing::MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(1);
  for (uint64_t d : data) n.add_data_deps(d);
  for (uint64_t c : ctrl) n.add_ctrl_deps(c);
  return n;
}

TEST(GraphLoad, NodesSortedByIdChildrenInIndexOrderRepeatsCountedOnce) {
  TempDir d;
  EtWriter w;
  ASSERT_TRUE(w.Open(d.File("g.0.et"), ChakraProtoMsg::GlobalMetadata()).ok());
  // In the file: 5, 2, 8, 1. Node 5 names 2 as data and control dependency, and 1.
  for (const auto& n : {Comp(5, {1, 2}, {2}), Comp(2, {1}), Comp(8, {5, 1}), Comp(1, {})}) ASSERT_TRUE(w.Write(n).ok());
  ASSERT_TRUE(w.Close().ok());
  GraphLoadOptions lo;
  lo.num_npus = 2;
  lo.num_dims = 1;
  auto g = LoadNpuGraph(d.File("g.0.et"), 0, lo);
  ASSERT_TRUE(g.ok()) << g.status().message();
  // By hand: sorted ids 1, 2, 5, 8 (indices 0..3); the children of 1 are 2, 5
  // and 8 (indices 1, 2, 3), of 2 is 5, of 5 is 8; 8 has none.
  ASSERT_EQ(g->nodes.size(), 4u);
  const uint64_t ids[] = {1, 2, 5, 8};
  const uint32_t deps[] = {0, 1, 2, 2};
  const std::vector<std::vector<uint32_t>> kids = {{1, 2, 3}, {2}, {3}, {}};
  for (size_t i = 0; i < 4; ++i) {
    const WorkNode& n = g->nodes[i];
    EXPECT_EQ(n.id, ids[i]);
    EXPECT_EQ(n.num_deps, deps[i]) << n.id;
    std::vector<uint32_t> got(g->children.begin() + n.child_begin, g->children.begin() + n.child_end);
    EXPECT_EQ(got, kids[i]) << n.id;
  }
  EXPECT_EQ(g->children.size(), 5u);
}

// 256 ranks whose compute differs by rank (so every rank is simulated),
// each then in one all-reduce.
void WriteLoop(const TempDir& d) {
  d.Write("network.yml", testing::NetworkYaml("Switch", 256, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 4, 10, 1600));
  testing::WriteTraces(d, 256, [](int rank) {
    ChakraProtoMsg::Node c = Comp(1, {});
    c.set_duration_micros(1 + rank % 7);
    ChakraProtoMsg::Node ar = testing::CollNode(2, 0, 1 << 20);
    ar.add_data_deps(1);
    return std::vector<ChakraProtoMsg::Node>{c, ar};
  });
}

Result<RunReport> RunWithThreads(const TempDir& d, int threads) {
  RunConfig c;
  c.workload_prefix = d.File("trace");
  c.network_path = d.File("network.yml");
  c.system_path = d.File("system.json");
  c.symmetry = "off";
  c.load_threads = threads;
  return RunSimulation(c, DefaultBackends());
}

TEST(GraphLoad, AnyNumberOfThreadsGivesTheSameReport) {
  TempDir d;
  WriteLoop(d);
  auto one = RunWithThreads(d, 1);
  auto four = RunWithThreads(d, 4);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(four.ok()) << four.status().message();
  ASSERT_EQ(one->per_npu.size(), 256u);
  // Rank 6 computes 7 us, the longest; everyone waits for it in the all-reduce.
  EXPECT_EQ(one->per_npu[6].compute_ns, 7000u);
  EXPECT_EQ(FormatReportJson(one.value()), FormatReportJson(four.value()));
}

TEST(GraphLoad, TheLowestBadRankIsReportedWhateverTheThreads) {
  TempDir d;
  WriteLoop(d);
  d.Write("trace.201.et", "not a trace");
  d.Write("trace.70.et", "not a trace either");
  for (int threads : {1, 2, 4}) {
    auto r = RunWithThreads(d, threads);
    ASSERT_FALSE(r.ok()) << threads;
    EXPECT_NE(r.status().message().find("trace.70.et"), std::string::npos) << threads << ": " << r.status().message();
    EXPECT_EQ(r.status().message().find("trace.201.et"), std::string::npos) << threads << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace orrery
