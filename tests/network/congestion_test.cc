// The congestion-aware backend on several dimensions: contention where links
// are shared, agreement with the analytical backend where they are not.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

void WriteMessages(const TempDir& d, int npus, const std::vector<testing::P2PMsg>& msgs) {
  std::vector<testing::P2PMsg> tagged = msgs;
  for (size_t i = 0; i < tagged.size(); ++i) tagged[i].tag = i;
  testing::WriteP2PTraces(d, npus, tagged);
}

Result<RunReport> RunNet(const TempDir& d, const std::string& net, const std::string& backend,
                         const std::string& groups = "") {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = net;
  c.files.system = d.File("system.json");
  c.run.backend = backend;
  if (!groups.empty()) c.files.comm_groups = d.File(groups);
  return RunSimulation(c, DefaultBackends());
}

TEST(CongestionAware, TwoFlowsCompeteForALinkOnTwoDimensions) {
  // 4x4 torus. Flow A: 0 -> 5 routes 0 -> 1 (dim 0) then 1 -> 5 (dim 1).
  // Flow B: 1 -> 5, four times larger, holds the 1 -> 5 link from t=0.
  TempDir d;
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  const uint64_t mib = 1 << 20;
  WriteMessages(d, 16, {{0, 5, mib}, {1, 5, 4 * mib}});
  const std::string net = "Ring(4,100GB/s,500ns)_Ring(4,100GB/s,500ns)";
  const double bpns = GiBpsToBytesPerNs(100);
  auto a = RunNet(d, net, "congestion-aware");
  ASSERT_TRUE(a.ok()) << a.status().message();
  const Tick b_ser = T(4 * mib / bpns);
  const Tick a_hop = T(500 + mib / bpns);
  const Tick b_done = T(500 + 4 * mib / bpns);
  EXPECT_EQ(a->per_npu[5].finished_ns, std::max(b_done, b_ser + a_hop));  // A waits for B on 1 -> 5
  EXPECT_EQ(a->per_npu[0].finished_ns, b_ser + a_hop);
  auto u = RunNet(d, net, "analytical");
  ASSERT_TRUE(u.ok());
  // No contention modelled. ASTRA-sim's rule (the default): 0 -> 5 differs in
  // dimensions 0 and 1 and is charged on dimension 0 only, one hop.
  EXPECT_EQ(u->per_npu[0].finished_ns, T(500 + mib / bpns));
  // Orrery's hierarchical model: the two dimensions are crossed one after the other.
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "group-collective-model": "hierarchical"})");
  auto h = RunNet(d, net, "analytical");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->per_npu[0].finished_ns, 2 * T(500 + mib / bpns));
}

TEST(CongestionAware, AgreesWithAnalyticalWhenNothingIsShared) {
  for (const char* net :
       {"Ring(4,100GB/s,500ns)_Ring(4,50GB/s,1us)", "FullyConnected(4,100GB/s,500ns)_Ring(4,50GB/s,1us)"}) {
    TempDir d;
    d.Write("system.json", R"({"preferred-dataset-splits": 4, "local-mem-bw": 1600,
      "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring"]})");
    ASSERT_TRUE(WriteSingleCollectiveTraces(16, CollectiveKind::kAllReduce, 8 << 20, d.File("trace")).ok());
    auto u = RunNet(d, net, "analytical");
    auto a = RunNet(d, net, "congestion-aware");
    ASSERT_TRUE(u.ok() && a.ok());
    EXPECT_EQ(FormatReportCsv(u.value()), FormatReportCsv(a.value())) << net;
  }
}

TEST(CongestionAware, CollectivesOfDifferentGroupsSlowEachOtherDown) {
  // Even and odd ranks each all-reduce over a flat ring; their 2-hop messages
  // share ring links. Alone vs together.
  const std::string net = "Ring(8,50GB/s,500ns)";
  auto write = [](const TempDir& d, const std::vector<int>& active) {
    d.Write("system.json", R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"]})");
    d.Write("groups.json", R"({"even": [0, 2, 4, 6], "odd": [1, 3, 5, 7]})");
    for (int r = 0; r < 8; ++r) {
      EtWriter w;
      ASSERT_TRUE(w.Open(d.File("trace." + std::to_string(r) + ".et"), ChakraProtoMsg::GlobalMetadata()).ok());
      if (std::find(active.begin(), active.end(), r % 2) != active.end()) {
        ChakraProtoMsg::Node n;
        n.set_id(1);
        n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
        auto* a = n.add_attr();
        a->set_name("comm_type");
        a->set_int64_val(0);
        a = n.add_attr();
        a->set_name("comm_size");
        a->set_int64_val(r % 2 ? 16 << 20 : 4 << 20);  // the odd ranks hold the shared links longer
        a = n.add_attr();
        a->set_name("pg_name");
        a->set_string_val(r % 2 ? "odd" : "even");
        ASSERT_TRUE(w.Write(n).ok());
      }
      ASSERT_TRUE(w.Close().ok());
    }
  };
  TempDir alone, both;
  write(alone, {0});
  write(both, {0, 1});
  for (const char* be : {"congestion-aware", "analytical"}) {
    auto a = RunNet(alone, net, be, "groups.json");
    auto b = RunNet(both, net, be, "groups.json");
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    if (std::string(be) == "congestion-aware") {
      EXPECT_GT(b->per_npu[0].finished_ns, a->per_npu[0].finished_ns);
    } else {
      EXPECT_EQ(b->per_npu[0].finished_ns, a->per_npu[0].finished_ns);
    }
  }
}

}  // namespace
}  // namespace orrery
