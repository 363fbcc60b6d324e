// The two group-collective models (docs/parity.md, "Communicator groups"):
// ASTRA-sim's (a group smaller than the network is one flat ring, ring forced
// where a list names several algorithms; a message across several dimensions
// is charged on the lowest) and Orrery's hierarchical one; the report line and
// the system JSON key.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "core/units.h"
#include "extern/astra_config.h"
#include "network/topology.h"
#include "report/report.h"
#include "system/comm_group.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

// Ring(4) x Switch(4): dim 0 100 GB/s and 500 ns a hop, dim 1 50 GB/s and
// 1000 ns a hop (two hops through the switch).
const char* kNet = "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n";
const double kBw0 = GiBpsToBytesPerNs(100), kBw1 = GiBpsToBytesPerNs(50);
constexpr Tick kEd = 10;       // endpoint delay
constexpr double kMem = 1600;  // local-mem-bw: a reducing step adds 3 * trunc(bytes / 1600)

std::string System(const std::string& model, const std::string& algo = "ring",
                   const std::string& collective = "all-reduce") {
  std::string j = R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600, ")" + collective +
                  R"(-implementation": [")" + algo + R"(", ")" + algo + R"("])";
  if (!model.empty()) j += R"(, "group-collective-model": ")" + model + R"(")";
  return j + "}";
}

// One collective on the listed ranks of 16, under communicator group "g".
void WriteGroupColl(const TempDir& d, const std::vector<int>& ranks, int comm_type, uint64_t bytes) {
  std::string json = R"({"g": [)";
  for (size_t i = 0; i < ranks.size(); ++i) json += (i ? ", " : "") + std::to_string(ranks[i]);
  d.Write("groups.json", json + "]}");
  testing::WriteTraces(d, 16, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) return nodes;
    auto n = testing::CollNode(1, comm_type, bytes);
    testing::SetAttr(&n, "pg_name", std::string("g"));
    nodes.push_back(n);
    return nodes;
  });
}

Result<RunReport> RunModel(const TempDir& d, const std::string& model, const std::string& algo = "ring",
                           const std::string& collective = "all-reduce") {
  d.Write("network.yml", kNet);
  d.Write("system.json", System(model, algo, collective));
  return testing::RunInWithGroups(d);
}

// The group {0, 2, 4, 6}: coordinates (0,0), (2,0), (0,1), (2,1). Its flat
// ring 0 -> 2 -> 4 -> 6 -> 0 has two steps inside dim 0 (0 -> 2, 4 -> 6: two
// ring hops) and two that change both coordinates (2 -> 4, 6 -> 0: dim 0 two
// hops, dim 1 through the switch).
TEST(GroupModel, FlatRingOverAStridedGroupUnderAstraSim) {
  TempDir d;
  const uint64_t S = 1 << 20;
  WriteGroupColl(d, {0, 2, 4, 6}, 0, S);
  // ASTRA-sim charges every step on dim 0, two hops: T(2 * 500 + b / bw0).
  // All-reduce on a ring of 4: 2(p-1) = 6 steps of S/4, the first 3 reducing,
  // each step plus the endpoint delay, and one endpoint delay to start.
  const uint64_t b = S / 4;
  const Tick step = T(2 * 500 + b / kBw0) + kEd;
  const Tick expect = kEd + 6 * step + 3 * 3 * T(b / kMem);
  for (const std::string model : {"", "astra-sim"}) {  // the key absent: ASTRA-sim's model
    auto r = RunModel(d, model);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (int rank : {0, 2, 4, 6}) EXPECT_EQ(r->per_npu[rank].finished_ns, expect) << model << " rank " << rank;
    EXPECT_EQ(r->per_npu[1].finished_ns, 0u);
    EXPECT_EQ(r->collectives.at(0).algorithm, "ALL_REDUCE:ring(flat group)");
    // Every message was charged on dim 0: the Switch carried nothing.
    EXPECT_EQ(r->dims.at(1).messages, 0u) << model;
  }
}

TEST(GroupModel, FlatRingOverAStridedGroupUnderHierarchical) {
  TempDir d;
  const uint64_t S = 1 << 20;
  WriteGroupColl(d, {0, 2, 4, 6}, 0, S);
  auto r = RunModel(d, "hierarchical");
  ASSERT_TRUE(r.ok()) << r.status().message();
  // The two crossing steps pay dim 0 (two hops) and then dim 1 (the switch's
  // two hops). The ring is a dataflow and slow and fast links alternate, so
  // every piece's path is 3 slow and 3 fast steps.
  const uint64_t b = S / 4;
  const Tick fast = T(2 * 500 + b / kBw0) + kEd;
  const Tick slow = T(2 * 500 + b / kBw0) + T(2 * 1000 + b / kBw1) + kEd;
  const Tick expect = kEd + 3 * fast + 3 * slow + 3 * 3 * T(b / kMem);
  for (int rank : {0, 2, 4, 6}) EXPECT_EQ(r->per_npu[rank].finished_ns, expect) << "rank " << rank;
  EXPECT_EQ(r->dims.at(1).messages, 2u * 6u);  // 2 crossing links x 6 steps
}

// The same group {0, 2, 4, 6} on Switch(4) x Switch(4): two members on each
// switch, a grid (dim 0: coordinates 0 and 2; dim 1: 0 and 1). The
// hierarchical model runs it per dimension, as NCCL's rings cross a node's
// boundary once per adapter: baseline all-reduces the whole buffer on dim 0
// (pairs {0,2} and {4,6}), then on dim 1 (pairs {0,4} and {2,6}); a ring of 2
// is 2 steps of S/2, the first reducing. ASTRA-sim's model keeps one flat
// ring over the four, every message charged on dim 0.
TEST(GroupModel, GridOverTwoSwitchesRunsPerDimensionUnderHierarchical) {
  TempDir d;
  const uint64_t S = 1 << 20;
  WriteGroupColl(d, {0, 2, 4, 6}, 0, S);
  d.Write("network.yml",
          "topology: [ Switch, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n");
  d.Write("system.json", System("hierarchical"));
  auto r = testing::RunInWithGroups(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t b = S / 2;
  const Tick dim0 = 2 * (T(2 * 500 + b / kBw0) + kEd) + 3 * T(b / kMem);
  const Tick dim1 = 2 * (T(2 * 1000 + b / kBw1) + kEd) + 3 * T(b / kMem);
  // Each phase starts after an endpoint delay, as every phase of a chunk does.
  for (int rank : {0, 2, 4, 6}) EXPECT_EQ(r->per_npu[rank].finished_ns, kEd + dim0 + kEd + dim1) << "rank " << rank;
  EXPECT_EQ(r->collectives.at(0).algorithm, "ALL_REDUCE:ring,ALL_REDUCE:ring");
  // Each member sends 2 messages on each dimension.
  EXPECT_EQ(r->dims.at(0).messages, 4u * 2u);
  EXPECT_EQ(r->dims.at(1).messages, 4u * 2u);
  d.Write("system.json", System("astra-sim"));
  auto flat = testing::RunInWithGroups(d);
  ASSERT_TRUE(flat.ok()) << flat.status().message();
  EXPECT_EQ(flat->collectives.at(0).algorithm, "ALL_REDUCE:ring(flat group)");
  // Halving-doubling on a dimension where the group has 3 members (Switch(8),
  // coordinates 0, 2, 4) cannot pair them: that dimension runs ring.
  WriteGroupColl(d, {0, 2, 4, 8, 10, 12}, 0, S);
  d.Write("network.yml",
          "topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n");
  d.Write("system.json", System("hierarchical", "halvingDoubling"));
  auto hd = testing::RunInWithGroups(d);
  ASSERT_TRUE(hd.ok()) << hd.status().message();
  EXPECT_EQ(hd->collectives.at(0).algorithm, "ALL_REDUCE:ring(group on dim 0),ALL_REDUCE:halvingDoubling");
}

// GridOf by hand on Switch(8) x Switch(2) (rank = c0 + 8·c1).
TEST(GroupModel, GridOfByHand) {
  const Topology t({Dim{Block::kSwitch, 8, 100, 500, 1}, Dim{Block::kSwitch, 2, 50, 1000, 1}});
  const GroupGrid dp = GridOf(t, {0, 2, 4, 6, 8, 10, 12, 14});  // DP beside TP 2
  EXPECT_TRUE(dp.grid);
  EXPECT_FALSE(dp.aligned);
  EXPECT_EQ(dp.lo, (std::vector<int>{0, 0}));
  EXPECT_EQ(dp.step, (std::vector<int>{2, 1}));
  EXPECT_EQ(dp.n, (std::vector<int>{4, 2}));
  EXPECT_TRUE(PhasesPerDimension(t, dp));
  const GroupGrid odd = GridOf(t, {3, 5, 7, 11, 13, 15});  // lo 3, step 2 on dim 0
  EXPECT_TRUE(odd.grid);
  EXPECT_EQ(odd.lo[0], 3);
  EXPECT_EQ(odd.step[0], 2);
  EXPECT_EQ(odd.n, (std::vector<int>{3, 2}));
  EXPECT_TRUE(GridOf(t, {8, 9, 10, 11, 12, 13, 14, 15}).aligned);  // dim 0 of node 1
  EXPECT_TRUE(GridOf(t, {2, 10}).aligned);                         // one coordinate of dim 0, all of dim 1
  EXPECT_TRUE(GridOf(t, {2, 3, 4}).grid);                          // part of dim 0 alone
  EXPECT_FALSE(PhasesPerDimension(t, GridOf(t, {2, 3, 4})));       // one partial dimension: a flat ring
  EXPECT_FALSE(GridOf(t, {0, 1, 4, 5}).grid);                      // 0, 1, 4, 5 is no progression
  EXPECT_FALSE(GridOf(t, {0, 2, 8}).grid);                         // (2, 1) is missing
  EXPECT_FALSE(GridOf(t, {0, 2, 2, 8, 10}).grid);                  // a repeated rank
  EXPECT_FALSE(GridOf(t, {}).grid);
  EXPECT_FALSE(GridOf(t, {-8, 0}).grid);  // not NPUs of the network
  EXPECT_FALSE(GridOf(t, {0, 16}).grid);
  // On a Ring a partial dimension's members are not all one hop apart: flat.
  const Topology ring({Dim{Block::kRing, 8, 100, 500, 1}, Dim{Block::kSwitch, 2, 50, 1000, 1}});
  EXPECT_TRUE(GridOf(ring, {0, 2, 4, 6, 8, 10, 12, 14}).grid);
  EXPECT_FALSE(PhasesPerDimension(ring, GridOf(ring, {0, 2, 4, 6, 8, 10, 12, 14})));
  EXPECT_TRUE(PhasesPerDimension(ring, GridOf(ring, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})));
}

// Placements where the two models agree: a group of dim 0 (TP inside a node)
// and a group along dim 1 (DP across nodes, one rank per node), each with
// ring on every dimension. Under ASTRA-sim's model each is a flat ring whose
// neighbours differ in one dimension only: the same messages as the
// hierarchical plan on that dimension.
TEST(GroupModel, WholeDimensionGroupsWithRingAgreeUnderBothModels) {
  const uint64_t S = 1 << 20;
  const uint64_t b = S / 4;
  struct Case {
    std::vector<int> ranks;
    Tick step;  // one ring step with its endpoint delay
  } cases[] = {{{4, 5, 6, 7}, T(500 + b / kBw0) + kEd}, {{1, 5, 9, 13}, T(2 * 1000 + b / kBw1) + kEd}};
  for (const Case& c : cases) {
    TempDir d;
    WriteGroupColl(d, c.ranks, 0, S);
    const Tick expect = kEd + 6 * c.step + 3 * 3 * T(b / kMem);
    for (const char* model : {"astra-sim", "hierarchical"}) {
      auto r = RunModel(d, model);
      ASSERT_TRUE(r.ok()) << r.status().message();
      for (int rank : c.ranks) EXPECT_EQ(r->per_npu[rank].finished_ns, expect) << model << " rank " << rank;
    }
  }
}

// A list of several algorithms is replaced by ring on a group (ASTRA-sim's
// CommunicatorGroup::get_collective_plan): direct all-to-all on {0, 1, 2, 3},
// the ranks of dim 0, runs as the ring all-to-all; the hierarchical model runs
// dim 0's direct algorithm.
TEST(GroupModel, SeveralAlgorithmsOnAGroupBecomeRingUnderAstraSim) {
  TempDir d;
  WriteGroupColl(d, {0, 1, 2, 3}, 6, 4 << 20);  // ALL_TO_ALL, 4 MiB
  auto direct = RunModel(d, "astra-sim", "direct", "all-to-all");
  auto ring = RunModel(d, "astra-sim", "ring", "all-to-all");
  auto hier = RunModel(d, "hierarchical", "direct", "all-to-all");
  ASSERT_TRUE(direct.ok()) << direct.status().message();
  ASSERT_TRUE(ring.ok()) << ring.status().message();
  ASSERT_TRUE(hier.ok()) << hier.status().message();
  EXPECT_EQ(direct->collectives.at(0).algorithm, "ALL_TO_ALL:ring(flat group)");
  EXPECT_EQ(hier->collectives.at(0).algorithm, "ALL_TO_ALL:direct");
  // A group that is not whole dimensions ({0, 2}) runs flat; the hierarchical model keeps
  // direct there, and the report names it as such.
  WriteGroupColl(d, {0, 2}, 6, 4 << 20);
  auto flat_direct = RunModel(d, "hierarchical", "direct", "all-to-all");
  ASSERT_TRUE(flat_direct.ok()) << flat_direct.status().message();
  EXPECT_EQ(flat_direct->collectives.at(0).algorithm, "ALL_TO_ALL:direct(flat group)");
  auto flat_ring = RunModel(d, "astra-sim", "direct", "all-to-all");
  ASSERT_TRUE(flat_ring.ok()) << flat_ring.status().message();
  EXPECT_EQ(flat_ring->collectives.at(0).algorithm, "ALL_TO_ALL:ring(flat group)");
  WriteGroupColl(d, {0, 1, 2, 3}, 6, 4 << 20);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(direct->per_npu[rank].finished_ns, ring->per_npu[rank].finished_ns) << rank;
    // Direct sends the three pieces at once: one 2-hop step at most, then done.
    EXPECT_LT(hier->per_npu[rank].finished_ns, direct->per_npu[rank].finished_ns) << rank;
  }
}

TEST(GroupModel, ReportNamesTheModelAndTheFirstGroupAcrossDimensions) {
  TempDir d;
  WriteGroupColl(d, {0, 2, 4, 6}, 0, 1 << 20);
  auto a = RunModel(d, "");
  ASSERT_TRUE(a.ok()) << a.status().message();
  const std::string text = FormatReportText(a.value());
  EXPECT_NE(text.find("group collectives: astra-sim (a group smaller than the network runs as one flat ring; a "
                      "message across several dimensions is charged on the lowest); first group across dimensions: "
                      "\"g\" = {0, 2, 4, 6}\n"),
            std::string::npos)
      << text;
  EXPECT_NE(FormatReportJson(a.value()).find("\"group_collectives\": \"astra-sim ("), std::string::npos);
  auto h = RunModel(d, "hierarchical");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_NE(FormatReportText(h.value()).find("group collectives: hierarchical (a group of whole dimensions, or a grid "
                                             "across several whose partial ones are switches, runs per dimension; a "
                                             "message across several dimensions is charged on each); first group "
                                             "across dimensions: \"g\" = {0, 2, 4, 6}\n"),
            std::string::npos);
  // A group inside one dimension: the line says none spans several.
  WriteGroupColl(d, {4, 5, 6, 7}, 0, 1 << 20);
  auto inside = RunModel(d, "");
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  EXPECT_NE(FormatReportText(inside.value()).find("; no group spans several dimensions\n"), std::string::npos);
  // One dimension: both models are the same, no line.
  d.Write("network.yml", "topology: [ Ring ]\nnpus_count: [ 16 ]\nbandwidth: [ 100 ]\nlatency: [ 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  auto one = testing::RunInWithGroups(d);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(FormatReportText(one.value()).find("group collectives:"), std::string::npos);
}

TEST(GroupModel, UnknownModelIsAnError) {
  auto bad = ParseAstraSystemJson(nlohmann::json::parse(R"({"group-collective-model": "flat"})"), "sys.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "sys.json: \"group-collective-model\" = \"flat\": valid values are astra-sim (ASTRA-sim's rules, the "
            "default), hierarchical (Orrery's per-dimension model)");
  auto number = ParseAstraSystemJson(nlohmann::json::parse(R"({"group-collective-model": 1})"), "sys.json");
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.status().message().find("group-collective-model"), std::string::npos) << number.status().message();
  auto ok = ParseAstraSystemJson(nlohmann::json::parse(R"({"group-collective-model": "hierarchical"})"), "sys.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->group_collective_model, "hierarchical");
  auto absent = ParseAstraSystemJson(nlohmann::json::parse("{}"), "sys.json");
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->group_collective_model, "astra-sim");
}

}  // namespace
}  // namespace orrery
