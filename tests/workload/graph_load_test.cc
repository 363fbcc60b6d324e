// Reading a rank's trace into its graph (workload/graph.cc): the graph's shape
// by hand, the same graph whatever order the file lists its nodes in, and the
// first bad file of many named.
#include <gtest/gtest.h>

#include "extern/et_io.h"
#include "run/run.h"
#include "tests/test_util.h"
#include "workload/graph.h"

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

// `nodes` written in this order as rank 0's trace at `path`, then read back
// (a 2-NPU, 1-D network).
Result<NpuGraph> WriteAndLoad(const std::string& path, const std::vector<ChakraProtoMsg::Node>& nodes) {
  EtWriter w;
  if (Status st = w.Open(path, ChakraProtoMsg::GlobalMetadata()); !st.ok()) return st;
  for (const auto& n : nodes) {
    if (Status st = w.Write(n); !st.ok()) return st;
  }
  if (Status st = w.Close(); !st.ok()) return st;
  GraphLoadOptions lo;
  lo.num_npus = 2;
  lo.num_dims = 1;
  return LoadNpuGraph(path, 0, lo);
}

TEST(GraphLoad, NodesSortedByIdChildrenInIndexOrderRepeatsCountedOnce) {
  TempDir d;
  // In the file: 5, 2, 8, 1. Node 5 names 2 as data and control dependency, and 1.
  auto g = WriteAndLoad(d.File("g.0.et"), {Comp(5, {1, 2}, {2}), Comp(2, {1}), Comp(8, {5, 1}), Comp(1, {})});
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

// A trace in id order takes the path without a sort: its graph must equal the
// one read from the same nodes in reverse order.
TEST(GraphLoad, IdOrderAndReverseOrderGiveTheSameGraph) {
  TempDir d;
  const std::vector<ChakraProtoMsg::Node> nodes = {Comp(1, {}), Comp(2, {1}), Comp(3, {1}, {2}), Comp(4, {3, 2})};
  auto a = WriteAndLoad(d.File("in.0.et"), nodes);
  auto b = WriteAndLoad(d.File("rev.0.et"), {nodes.rbegin(), nodes.rend()});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  // By hand: children of 1 are 2 and 3 (indices 1, 2), of 2 are 3 and 4, of 3 is 4.
  const std::vector<std::vector<uint32_t>> kids = {{1, 2}, {2, 3}, {3}, {}};
  const uint32_t deps[] = {0, 1, 2, 2};
  for (const auto* g : {&a.value(), &b.value()}) {
    ASSERT_EQ(g->nodes.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      const WorkNode& n = g->nodes[i];
      EXPECT_EQ(n.id, i + 1);
      EXPECT_EQ(n.num_deps, deps[i]) << n.id;
      EXPECT_EQ(std::vector<uint32_t>(g->children.begin() + n.child_begin, g->children.begin() + n.child_end), kids[i])
          << n.id;
    }
  }
}

// 256 ranks, each a compute node then one all-reduce; two files are corrupt.
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

TEST(GraphLoad, TheLowestBadRankIsReported) {
  TempDir d;
  WriteLoop(d);
  d.Write("trace.201.et", "not a trace");
  d.Write("trace.70.et", "not a trace either");
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.symmetry = SymmetryMode::kOff;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("trace.70.et"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("trace.201.et"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace orrery
