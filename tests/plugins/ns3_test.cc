// The ns-3 backend (built only when ns-3 is installed): agreement with the
// analytical backend on uncongested messages, queueing on an incast.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "plugins/loader.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

BackendRegistry WithNs3() {
  static BackendRegistry* reg = [] {
    auto* r = new BackendRegistry(DefaultBackends());
    PluginRegistries regs;
    regs.network = r;
    auto p = LoadPlugin(ORRERY_NS3_PLUGIN_PATH, &regs);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return r;
  }();
  return *reg;
}

// Documented tolerance: UDP/IPv4/PPP headers add 30 bytes to every 1472-byte payload (2.0%).
void ExpectClose(Tick ns3, Tick analytical, const std::string& what) {
  EXPECT_GE(ns3, analytical * 99 / 100) << what;
  EXPECT_LE(ns3, analytical * 103 / 100) << what;
}

void WriteSends(const testing::TempDir& d, int npus, const std::vector<std::pair<int, int>>& flows, uint64_t bytes) {
  std::vector<testing::P2PMsg> msgs;
  for (size_t i = 0; i < flows.size(); ++i) msgs.push_back({flows[i].first, flows[i].second, bytes, i});
  testing::WriteP2PTraces(d, npus, msgs);
}

Result<RunReport> RunWith(const testing::TempDir& d, const std::string& net, const std::string& backend) {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = net;
  c.files.system = d.File("system.json");
  c.run.backend = backend;
  c.run.symmetry = SymmetryMode::kOff;
  return RunSimulation(c, WithNs3());
}

TEST(Ns3Backend, SingleMessageAgreesWithAnalytical) {
  testing::TempDir d;
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  WriteSends(d, 8, {{0, 3}}, 1 << 20);
  for (const char* net : {"Ring(8,50GB/s,500ns)", "Switch(8,100GB/s,1us)", "FullyConnected(8,25GB/s,200ns)"}) {
    auto a = RunWith(d, net, "analytical");
    auto n = RunWith(d, net, "ns3");
    ASSERT_TRUE(a.ok() && n.ok()) << n.status().message();
    // Packet pipelining: ns-3 pays the serialization once plus one packet per extra hop,
    // the analytical model once; both pay every hop's latency.
    ExpectClose(n->per_npu[3].finished_ns, a->per_npu[3].finished_ns, net);
  }
}

TEST(Ns3Backend, AstraSimAllReduceExample) {
  testing::TempDir d;
  d.Write("system.json", testing::SystemJson("ring", 4, 10, 50));
  ASSERT_TRUE(WriteSingleCollectiveTraces(8, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
  auto a = RunWith(d, "Ring(8,50GB/s,500ns)", "analytical");
  auto n = RunWith(d, "Ring(8,50GB/s,500ns)", "ns3");
  ASSERT_TRUE(a.ok() && n.ok()) << n.status().message();
  EXPECT_EQ(a->per_npu[0].finished_ns, 117780u);
  ExpectClose(n->per_npu[0].finished_ns, 117780, "8-NPU ring all-reduce");
}

TEST(Ns3Backend, IncastQueuesWhereAnalyticalDoesNot) {
  testing::TempDir d;
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  const uint64_t bytes = 4 << 20;
  WriteSends(d, 8, {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, bytes);
  const std::string net = "Switch(8,100GB/s,1us)";
  auto a = RunWith(d, net, "analytical");
  auto n = RunWith(d, net, "ns3");
  ASSERT_TRUE(a.ok() && n.ok()) << n.status().message();
  const double ser = bytes / GiBpsToBytesPerNs(100);
  EXPECT_EQ(a->per_npu[0].finished_ns, static_cast<Tick>(2000 + ser));  // four flows, no queueing modelled
  EXPECT_GT(n->per_npu[0].finished_ns, static_cast<Tick>(3.9 * ser));   // the switch's down-link carries all four
  EXPECT_LT(n->per_npu[0].finished_ns, static_cast<Tick>(4.3 * ser + 4000));
}

}  // namespace
}  // namespace orrery
