// Hierarchical collectives, involved_dim, communicator groups, the roofline.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

// One collective node per listed rank (others get an empty trace).
void WriteColl(const TempDir& d, int npus, const std::vector<int>& ranks, int comm_type, uint64_t bytes,
               const std::vector<bool>& involved = {}, const std::string& pg = "") {
  testing::WriteTraces(d, npus, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) return nodes;
    auto n = testing::CollNode(1, comm_type, bytes);
    if (!involved.empty()) testing::SetAttr(&n, "involved_dim", involved);
    if (!pg.empty()) testing::SetAttr(&n, "pg_name", pg);
    nodes.push_back(n);
    return nodes;
  });
}

std::vector<int> AllRanks(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

const char* kNet2d =
    "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n";

struct Dim2 {
  double bw0 = GiBpsToBytesPerNs(100), bw1 = GiBpsToBytesPerNs(50);
  Tick ed = 10;
  double mem = 1600;
  Tick Step0(uint64_t b) const { return T(500 + b / bw0) + ed; }   // ring neighbour, 1 hop
  Tick Step1(uint64_t b) const { return T(2000 + b / bw1) + ed; }  // through the switch
  Tick R(uint64_t b) const { return 3 * T(b / mem); }
};

TEST(Hierarchical, LocalBwAwareAllReduceOnTwoDimensions) {
  TempDir d;
  d.Write("network.yml", kNet2d);
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring"]})");
  const uint64_t S = 1 << 20;
  WriteColl(d, 16, AllRanks(16), 0, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Dim2 m;
  // Reduce-scatter on dim 0 (S -> S/4), all-reduce on dim 1 (S/4), all-gather on dim 0 (S/4 -> S).
  const Tick rs = m.ed + 3 * m.Step0(S / 4) + 3 * m.R(S / 4);
  const Tick ar = m.ed + 6 * m.Step1(S / 16) + 3 * m.R(S / 16);
  const Tick ag = m.ed + 3 * m.Step0(S / 4);
  for (const auto& n : r->per_npu) EXPECT_EQ(n.finished_ns, rs + ar + ag) << "rank " << n.rank;
  EXPECT_EQ(r->collectives.at(0).algorithm, "REDUCE_SCATTER:ring,ALL_REDUCE:ring,ALL_GATHER:ring");
}

TEST(Hierarchical, BaselineRunsTheWholeCollectiveOnEachDimension) {
  TempDir d;
  d.Write("network.yml", kNet2d);
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "collective-optimization": "baseline", "all-reduce-implementation": ["ring", "ring"]})");
  const uint64_t S = 1 << 20;
  WriteColl(d, 16, AllRanks(16), 0, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Dim2 m;
  const Tick ar0 = m.ed + 6 * m.Step0(S / 4) + 3 * m.R(S / 4);
  const Tick ar1 = m.ed + 6 * m.Step1(S / 4) + 3 * m.R(S / 4);
  EXPECT_EQ(testing::MaxFinished(r.value()), ar0 + ar1);
}

TEST(Hierarchical, InvolvedDimSkipsADimension) {
  TempDir d;
  d.Write("network.yml", kNet2d);
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring"]})");
  const uint64_t S = 1 << 20;
  WriteColl(d, 16, AllRanks(16), 0, S, {false, true});
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Dim2 m;
  EXPECT_EQ(testing::MaxFinished(r.value()), m.ed + 6 * m.Step1(S / 4) + 3 * m.R(S / 4));
}

TEST(CommGroups, AlignedGroupRunsOnItsDimension) {
  TempDir d;
  d.Write("network.yml", kNet2d);
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring"]})");
  d.Write("groups.json", R"({"dp": [0, 4, 8, 12]})");
  const uint64_t S = 1 << 20;
  WriteColl(d, 16, {0, 4, 8, 12}, 0, S, {}, "dp");
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = d.File("groups.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  Dim2 m;
  EXPECT_EQ(r->per_npu[4].finished_ns, m.ed + 6 * m.Step1(S / 4) + 3 * m.R(S / 4));
  EXPECT_EQ(r->per_npu[1].finished_ns, 0u);  // not in the group, nothing to do
}

TEST(CommGroups, UnalignedGroupRunsAsAFlatRing) {
  TempDir d;
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "all-reduce-implementation": ["ring"]})");
  d.Write("groups.json", R"({"7": [1, 2, 3]})");
  const uint64_t S = 3 << 20;
  WriteColl(d, 8, {1, 2, 3}, 0, S, {}, "7");
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = d.File("groups.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Ring 1 -> 2 -> 3 -> 1: the 3 -> 1 step takes two hops and paces every step.
  const double bw = GiBpsToBytesPerNs(50);
  const uint64_t msg = S / 3;
  const Tick slow = T(2 * 500 + msg / bw) + 10;
  const Tick red = 3 * T(msg / 1600.0);
  for (int rank : {1, 2, 3}) {
    EXPECT_GE(r->per_npu[rank].finished_ns, 10 + 4 * (T(500 + msg / bw) + 10) + 2 * red);
    EXPECT_LE(r->per_npu[rank].finished_ns, 10 + 4 * slow + 2 * red);
  }
  EXPECT_EQ(r->collectives.size(), 0u);  // rank 0 is not in the group
  EXPECT_EQ(r->per_npu[0].finished_ns, 0u);
}

TEST(CommGroups, UnknownGroupNameIsAnError) {
  TempDir d;
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("groups.json", R"({"a": [0, 1]})");
  WriteColl(d, 4, {0, 1}, 0, 1024, {}, "b");
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = d.File("groups.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pg_name \"b\" is not in the communicator group configuration"),
            std::string::npos)
      << r.status().message();
}

TEST(Roofline, ComputeAndMemoryBound) {
  TempDir d;
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 1000})");
  testing::WriteTraces(d, 2, [](int r) {
    auto n = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    testing::SetAttr(&n, "num_ops", uint64_t{1000000000});
    testing::SetAttr(&n, "tensor_size", uint64_t{r == 0 ? 1000000u : 1000000000u});  // intensity 1000 vs 1 op/byte
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 10000u);    // 1e9 ops at the 100 TFLOPS peak
  EXPECT_EQ(r->per_npu[1].finished_ns, 1000000u);  // 1e9 bytes at 1000 GB/s
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(Hierarchical, ThreeDimensionsPerPhaseSizesAndTimes) {
  testing::TempDir d;
  d.Write("system.json", R"({"endpoint-delay": 5, "preferred-dataset-splits": 1, "local-mem-bw": 800,
    "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring", "ring"]})");
  const uint64_t S = 3 << 20;
  ASSERT_TRUE(WriteSingleCollectiveTraces(32, CollectiveKind::kAllReduce, S, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = "Ring(2,400GB/s,100ns)_FullyConnected(4,200GB/s,300ns)_Switch(4,50GB/s,1us)";
  c.files.system = d.File("system.json");
  c.run.symmetry = SymmetryMode::kOff;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tick ed = 5;
  auto t = [](double x) { return static_cast<Tick>(x); };
  auto step = [&](double lat_hops, double gbps, uint64_t b) { return t(lat_hops + b / GiBpsToBytesPerNs(gbps)) + ed; };
  auto red = [&](uint64_t b) { return 3 * t(b / 800.0); };
  // Sizes: S -> RS dim0 (p=2) -> S/2 -> RS dim1 (p=4) -> S/8 -> AR dim2 (p=4) -> AG dim1 -> S/2 -> AG dim0 -> S.
  const Tick rs0 = ed + 1 * step(100, 400, S / 2) + 1 * red(S / 2);
  const Tick rs1 = ed + 3 * step(300, 200, S / 8) + 3 * red(S / 8);
  const Tick ar2 = ed + 6 * step(2000, 50, S / 32) + 3 * red(S / 32);
  const Tick ag1 = ed + 3 * step(300, 200, S / 8);
  const Tick ag0 = ed + 1 * step(100, 400, S / 2);
  for (const auto& n : r->per_npu) EXPECT_EQ(n.finished_ns, rs0 + rs1 + ar2 + ag1 + ag0) << "rank " << n.rank;
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(OneVariants, OneRingSpansEveryNpuOfAllDimensions) {
  testing::TempDir d;
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "all-reduce-implementation": ["oneRing"], "group-collective-model": "hierarchical"})");
  const uint64_t S = 1 << 20;
  ASSERT_TRUE(WriteSingleCollectiveTraces(8, CollectiveKind::kAllReduce, S, d.File("trace")).ok());
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  // A 2x4 torus where every link is the same: a ring over ids 0..7 has 1-hop neighbours except
  // at 1 -> 2, 3 -> 4, 5 -> 6, 7 -> 0, which change both coordinates (one hop in each).
  c.files.network = "Ring(2,50GB/s,500ns)_Ring(4,50GB/s,500ns)";
  c.files.system = d.File("system.json");
  c.run.symmetry = SymmetryMode::kOff;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collectives.at(0).algorithm, "ALL_REDUCE:oneRing");
  // A ring is a dataflow: the critical path follows the data around the ring, so its 14 steps
  // alternate a two-dimension crossing (each dimension trunc(500 + x)) and a one-hop link.
  const uint64_t msg = S / 8;
  const Tick one = static_cast<Tick>(500 + msg / GiBpsToBytesPerNs(50));
  const Tick red = 3 * static_cast<Tick>(msg / 1600.0);
  EXPECT_EQ(testing::MaxFinished(r.value()), 10 + 7 * (2 * one) + 7 * one + 14 * 10 + 7 * red);
  // ASTRA-sim's model charges a two-dimension crossing on dimension 0 only: 14 one-hop steps.
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
    "all-reduce-implementation": ["oneRing"], "group-collective-model": "astra-sim"})");
  auto a = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(testing::MaxFinished(a.value()), 10 + 14 * one + 14 * 10 + 7 * red);
}

}  // namespace
}  // namespace orrery
