// Single collectives and single messages checked against their closed forms,
// to the nanosecond.
#include <gtest/gtest.h>

#include <sstream>

#include "core/tick.h"
#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

Tick Trunc(double x) { return static_cast<Tick>(x); }

struct RingCase {
  int p;
  uint64_t bytes;
  int splits;
};

// Readable, stable test names in ctest (no byte dump of the struct).
void PrintTo(const RingCase& c, std::ostream* os) {
  *os << c.p << " NPUs, " << c.bytes << " bytes, " << c.splits << " splits";
}

class RingAllReduce : public ::testing::TestWithParam<RingCase> {};

TEST_P(RingAllReduce, MatchesClosedForm) {
  const auto c = GetParam();
  const double bw = 50, lat = 500, mem = 1600;
  const int ed = 10;
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", c.p, bw, lat));
  d.Write("system.json", testing::SystemJson("ring", c.splits, ed, mem));
  ASSERT_TRUE(WriteSingleCollectiveTraces(c.p, CollectiveKind::kAllReduce, c.bytes, d.File("trace")).ok());
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t msg = c.bytes / c.splits / c.p;
  const Tick step = Trunc(lat + msg / GiBpsToBytesPerNs(bw)) + ed;
  const Tick reduce = 3 * Trunc(msg / mem);
  const Tick chunk = ed + 2 * (c.p - 1) * step + (c.p - 1) * reduce;
  for (const auto& n : r->per_npu) EXPECT_EQ(n.finished_ns, c.splits * chunk) << "rank " << n.rank;
  // The congestion-aware backend agrees on this uncongested pattern.
  auto a = testing::RunIn(d, "congestion-aware");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(testing::MaxFinished(a.value()), c.splits * chunk);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingAllReduce,
                         ::testing::Values(RingCase{4, 1 << 20, 4}, RingCase{8, 1 << 20, 4}, RingCase{16, 1 << 20, 4},
                                           RingCase{8, 8 << 20, 2}, RingCase{32, 4 << 20, 1}),
                         [](const ::testing::TestParamInfo<RingCase>& i) {
                           std::ostringstream name;
                           name << "p" << i.param.p << "_bytes" << i.param.bytes << "_splits" << i.param.splits;
                           return name.str();
                         });

TEST(RingCollectives, ReduceScatterAllGatherAllToAll) {
  const int p = 8;
  const double bw = 50, lat = 500, mem = 1600;
  const int ed = 10, splits = 4;
  const uint64_t bytes = 1 << 20;
  const double bpns = GiBpsToBytesPerNs(bw);
  const uint64_t chunk = bytes / splits;
  struct Want {
    int type;
    Tick per_chunk;
  };
  const uint64_t msg = chunk / p;
  const Tick step = Trunc(lat + msg / bpns) + ed;
  const Want wants[] = {
      {7, ed + (p - 1) * step + (p - 1) * 3 * Trunc(msg / mem)},  // reduce-scatter
      {2, ed + (p - 1) * (Trunc(lat + chunk / bpns) + ed)},       // all-gather: whole chunk per step
      {6, ed + (p - 1) * p / 2 * step},                           // all-to-all on a ring
  };
  for (const auto& w : wants) {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Ring", p, bw, lat));
    d.Write("system.json", testing::SystemJson("ring", splits, ed, mem));
    ASSERT_TRUE(WriteSingleCollectiveTraces(p, static_cast<CollectiveKind>(w.type), bytes, d.File("trace")).ok());
    auto r = testing::RunIn(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(testing::MaxFinished(r.value()), splits * w.per_chunk)
        << CollectiveName(static_cast<CollectiveKind>(w.type));
  }
}

TEST(SwitchAllReduce, DirectAndHalvingDoubling) {
  const int p = 8, ed = 10, splits = 4;
  const double bw = 50, lat = 500, mem = 1600;
  const double bpns = GiBpsToBytesPerNs(bw);
  const uint64_t chunk = (1 << 20) / splits;
  auto T = [&](uint64_t bytes) { return Trunc(2 * lat + bytes / bpns); };  // NPU -> switch -> NPU
  auto R = [&](uint64_t bytes) { return 3 * Trunc(bytes / mem); };
  {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Switch", p, bw, lat));
    d.Write("system.json", testing::SystemJson("direct", splits, ed, mem));
    ASSERT_TRUE(WriteSingleCollectiveTraces(p, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
    auto r = testing::RunIn(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const uint64_t msg = chunk / p;
    // All p-1 messages leave at once, are reduced, then the p-1 results go out.
    EXPECT_EQ(testing::MaxFinished(r.value()), splits * (3 * ed + 2 * T(msg) + R(msg)));
  }
  {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Switch", p, bw, lat));
    d.Write("system.json", testing::SystemJson("halvingDoubling", splits, ed, mem));
    ASSERT_TRUE(WriteSingleCollectiveTraces(p, CollectiveKind::kAllReduce, 1 << 20, d.File("trace")).ok());
    auto r = testing::RunIn(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    // log2(8) = 3 halving steps then 3 doubling steps.
    const uint64_t s[] = {chunk / 2, chunk / 4, chunk / 8, chunk / 8, chunk / 4, chunk / 2};
    Tick per = ed;
    for (uint64_t b : s) per += T(b) + ed;
    per += R(chunk / 4) + R(chunk / 8);
    EXPECT_EQ(testing::MaxFinished(r.value()), splits * per);
  }
}

void WriteSendRecv(const TempDir& d, int npus, int src, int dst, uint64_t bytes) {
  testing::WriteP2PTraces(d, npus, {{src, dst, bytes, 7}});
}

TEST(SingleMessage, EachBuildingBlockAndBackend) {
  const uint64_t bytes = 3 << 20;
  const double bw = 100, lat = 700;
  const double x = bytes / GiBpsToBytesPerNs(bw);
  struct Case {
    const char* block;
    int dst;
    Tick unaware;
    Tick aware;
  };
  const Case cases[] = {
      {"Ring", 3, Trunc(3 * lat + x), 3 * Trunc(lat + x)},  // 3 hops the short way round
      {"Ring", 6, Trunc(2 * lat + x), 2 * Trunc(lat + x)},  // 2 hops the other way
      {"FullyConnected", 5, Trunc(lat + x), Trunc(lat + x)},
      {"Switch", 5, Trunc(2 * lat + x), 2 * Trunc(lat + x)},  // up-link and down-link
  };
  for (const auto& c : cases) {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml(c.block, 8, bw, lat));
    d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
    WriteSendRecv(d, 8, 0, c.dst, bytes);
    auto u = testing::RunIn(d, "analytical");
    ASSERT_TRUE(u.ok()) << u.status().message();
    EXPECT_EQ(u->per_npu[c.dst].finished_ns, c.unaware) << c.block << " -> " << c.dst;
    auto a = testing::RunIn(d, "congestion-aware");
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->per_npu[c.dst].finished_ns, c.aware) << c.block << " -> " << c.dst;
  }
}

TEST(CongestionAware, IncastQueuesOnTheDownLink) {
  // Ranks 1..3 each send to rank 0 through one switch: the down-link to rank 0
  // serialises them; the analytical backend does not.
  const uint64_t bytes = 1 << 20;
  const double bw = 50, lat = 500;
  const double x = bytes / GiBpsToBytesPerNs(bw);
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Switch", 4, bw, lat));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  testing::WriteP2PTraces(d, 4, {{1, 0, bytes, 1}, {2, 0, bytes, 2}, {3, 0, bytes, 3}});
  auto u = testing::RunIn(d, "analytical");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->per_npu[0].finished_ns, Trunc(2 * lat + x));
  auto a = testing::RunIn(d, "congestion-aware");
  ASSERT_TRUE(a.ok()) << a.status().message();
  // Up-links in parallel; the shared down-link carries three messages back to back.
  EXPECT_EQ(a->per_npu[0].finished_ns, Trunc(lat + x) + 2 * Trunc(x) + Trunc(lat + x));
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

void WriteRooted(const testing::TempDir& d, int npus, int comm_type, uint64_t bytes, int root) {
  ChakraProtoMsg::GlobalMetadata md;
  for (int r = 0; r < npus; ++r) {
    EtWriter w;
    ASSERT_TRUE(w.Open(d.File("trace." + std::to_string(r) + ".et"), md).ok());
    ChakraProtoMsg::Node n;
    n.set_id(1);
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    auto add = [&](const char* name, uint64_t v) {
      auto* a = n.add_attr();
      a->set_name(name);
      a->set_uint64_val(v);
    };
    add("comm_type", comm_type);
    if (comm_type != 9) add("comm_size", bytes);
    add("root", root);
    ASSERT_TRUE(w.Write(n).ok());
    ASSERT_TRUE(w.Close().ok());
  }
}

Tick T(double x) { return static_cast<Tick>(x); }

TEST(RootedCollectives, ChainBroadcastOnARing) {
  const double bw = 50, lat = 500;
  const uint64_t bytes = 1 << 20;
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, bw, lat));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  WriteRooted(d, 8, 5, bytes, 2);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tick hop = T(lat + bytes / GiBpsToBytesPerNs(bw));
  for (int k = 0; k < 8; ++k) {
    const int rank = (2 + k) % 8;                       // k hops down the chain from the root
    const Tick want = k < 7 ? (k + 1) * hop : 7 * hop;  // a sender finishes when its message is delivered
    EXPECT_EQ(r->per_npu[rank].finished_ns, want) << "rank " << rank;
  }
  EXPECT_EQ(r->collectives.at(0).algorithm, "chain broadcast");
}

TEST(RootedCollectives, ChainReduceAddsTheReductionPerHop) {
  const double bw = 50, lat = 500, mem = 1600;
  const uint64_t bytes = 1 << 20;
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, bw, lat));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, mem));
  WriteRooted(d, 4, 1, bytes, 0);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tick hop = T(lat + bytes / GiBpsToBytesPerNs(bw));
  const Tick red = 3 * T(bytes / mem);
  // 3 -> 2 -> 1 -> 0: three hops, three reductions (at 2, 1 and the root).
  EXPECT_EQ(r->per_npu[0].finished_ns, 3 * hop + 3 * red);
}

TEST(RootedCollectives, DirectGatherAndScatterOnASwitch) {
  const double bw = 100, lat = 300;
  const uint64_t bytes = 1 << 20;
  const double bpns = GiBpsToBytesPerNs(bw);
  for (int type : {3, 4}) {
    testing::TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Switch", 4, bw, lat));
    d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
    WriteRooted(d, 4, type, bytes, 1);
    auto u = testing::RunIn(d, "analytical");
    ASSERT_TRUE(u.ok()) << u.status().message();
    const uint64_t each = type == 3 ? bytes : bytes / 4;
    EXPECT_EQ(u->per_npu[1].finished_ns, T(2 * lat + each / bpns)) << CollectiveName(static_cast<CollectiveKind>(type));
    // Congestion-aware: the root's one link serialises the three messages.
    auto a = testing::RunIn(d, "congestion-aware");
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->per_npu[1].finished_ns, T(lat + each / bpns) + 2 * T(each / bpns) + T(lat + each / bpns))
        << CollectiveName(static_cast<CollectiveKind>(type));
  }
}

TEST(RootedCollectives, DisseminationBarrier) {
  const double bw = 50, lat = 500;
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, bw, lat));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  WriteRooted(d, 8, 9, 0, 0);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double x = 1 / GiBpsToBytesPerNs(bw);
  // Rounds to +1, +2, +4: 1, 2 and 4 ring hops.
  const Tick want = T(lat + x) + T(2 * lat + x) + T(4 * lat + x);
  for (const auto& n : r->per_npu) EXPECT_EQ(n.finished_ns, want) << "rank " << n.rank;
}

}  // namespace
}  // namespace orrery
