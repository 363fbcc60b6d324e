// Control edges (ctrl_deps) as early Chakra converters wrote them, for
// operator-tree parents: errors name the edge's kind, and --ctrl-deps=repair
// drops the dangling, self and cyclic ones and counts them per rank.
#include <gtest/gtest.h>

#include "run/run.h"
#include "tests/test_util.h"
#include "workload/graph.h"

namespace orrery {
namespace {

using testing::TempDir;

ChakraProtoMsg::Node Comp(uint64_t id, uint64_t us, std::vector<uint64_t> data, std::vector<uint64_t> ctrl) {
  auto n = testing::MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(us);
  for (uint64_t d : data) n.add_data_deps(d);
  for (uint64_t c : ctrl) n.add_ctrl_deps(c);
  return n;
}

// A chain 1 -> 2 -> 3 by data edges (1, 2 and 4 us), with the control edges an operator tree gives:
// 2 names a parent 99 that is not in the trace, 3 names itself, and 1 names 3 (a cycle with 3's data edge to 2).
std::vector<ChakraProtoMsg::Node> OperatorTree() {
  return {Comp(1, 1, {}, {3}), Comp(2, 2, {1}, {99}), Comp(3, 4, {2}, {3})};
}

Result<NpuGraph> Load(const TempDir& d, const std::vector<ChakraProtoMsg::Node>& nodes, bool repair) {
  testing::WriteTraces(d, 1, [&](int) { return nodes; });
  GraphLoadOptions lo;
  lo.num_npus = 1;
  lo.num_dims = 1;
  lo.repair_ctrl_deps = repair;
  return LoadNpuGraph(d.File("trace.0.et"), 0, lo);
}

std::string Error(const Result<NpuGraph>& g) { return g.ok() ? "(loaded)" : g.status().message(); }

TEST(CtrlDeps, StrictErrorsNameTheEdgeKind) {
  TempDir d;
  const std::string t = d.File("trace.0.et");
  EXPECT_EQ(Error(Load(d, {Comp(1, 1, {}, {}), Comp(2, 1, {1}, {99})}, false)),
            t + ": node 2 (rank 0) depends on node 99, which is not in the trace (a ctrl_deps edge; "
                "--ctrl-deps=repair drops control edges that point at no node)");
  EXPECT_EQ(Error(Load(d, {Comp(1, 1, {}, {}), Comp(2, 1, {99}, {1})}, false)),
            t + ": node 2 (rank 0) depends on node 99, which is not in the trace (a data_deps edge)");
  EXPECT_EQ(Error(Load(d, {Comp(1, 1, {}, {1})}, false)),
            t + ": node 1 (rank 0) depends on itself (a ctrl_deps edge; --ctrl-deps=repair drops control edges "
                "that point at their own node)");
  EXPECT_EQ(Error(Load(d, {Comp(1, 1, {}, {3}), Comp(2, 2, {1}, {}), Comp(3, 4, {2}, {})}, false)),
            t + ": dependency cycle through node 1 (rank 0); 3 node(s) can never run; the cycle has ctrl_deps edges "
                "(operator-tree parents, as early Chakra converters wrote them): --ctrl-deps=repair drops control "
                "edges that lie on cycles");
  // Node 4 hangs below the cycle of 2 and 3: only the cycle's nodes are named.
  EXPECT_EQ(Error(
                Load(d, {Comp(1, 1, {}, {}), Comp(2, 1, {1, 3}, {}), Comp(3, 1, {2}, {}), Comp(4, 1, {3}, {})}, true)),
            t + ": dependency cycle through node 2 (rank 0); 3 node(s) can never run; its edges are all data_deps");
}

// Repair keeps the data chain and drops the three control edges, one of each kind.
TEST(CtrlDeps, RepairDropsDanglingSelfAndCyclicControlEdges) {
  TempDir d;
  auto g = Load(d, OperatorTree(), true);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->notes.ctrl_dangling, 1u);
  EXPECT_EQ(g->notes.ctrl_self, 1u);
  EXPECT_EQ(g->notes.ctrl_cyclic, 1u);
  ASSERT_EQ(g->nodes.size(), 3u);
  EXPECT_EQ(g->nodes[0].num_deps, 0u);
  EXPECT_EQ(g->nodes[1].num_deps, 1u);
  EXPECT_EQ(g->nodes[2].num_deps, 1u);
  // A control edge that keeps the graph acyclic stays: 3 after 1 by control as well as through 2.
  auto kept = Load(d, {Comp(1, 1, {}, {}), Comp(2, 2, {1}, {}), Comp(3, 4, {2}, {1})}, true);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->nodes[2].num_deps, 2u);
  EXPECT_EQ(kept->notes.ctrl_cyclic, 0u);
}

TEST(CtrlDeps, TheRunSaysHowManyEdgesEachRankDropped) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  testing::WriteTraces(d, 2, [](int r) {
    auto nodes = OperatorTree();
    if (r == 1) nodes[1].clear_ctrl_deps();  // rank 1 drops two edges
    return nodes;
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  auto strict = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(strict.ok());
  c.run.repair_ctrl_deps = true;
  c.run.symmetry = SymmetryMode::kOff;  // each rank read and simulated: each says what it dropped
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 7000u);  // 1 + 2 + 4 us along the data chain
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_EQ(r->notes[0],
            "ctrl_deps: rank 0 dropped 3 control edge(s): 1 to nodes not in the trace, 1 to the node itself, 1 on "
            "dependency cycles");
  EXPECT_EQ(r->notes[1],
            "ctrl_deps: rank 1 dropped 2 control edge(s): 0 to nodes not in the trace, 1 to the node itself, 1 on "
            "dependency cycles");
}

TEST(CtrlDeps, TheFlagTakesStrictOrRepair) {
  std::string err;
  EXPECT_EQ(testing::RunCli("run --example=default --ctrl-deps=loose", &err), 2);
  EXPECT_NE(err.find("--ctrl-deps = \"loose\": valid: strict, repair"), std::string::npos) << err;
}

}  // namespace
}  // namespace orrery
