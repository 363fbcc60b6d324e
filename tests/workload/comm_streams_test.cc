// Communication streams (node attribute comm_stream): each stream has its own
// communication slot, so nodes on different streams of one NPU are in flight
// together; on one stream they take turns (ASTRA-sim's single slot). Every
// expected time is derived by hand in the comments.
#include <gtest/gtest.h>

#include "core/units.h"
#include "extern/et_io.h"
#include "report/report.h"
#include "run/run.h"
#include "tests/test_util.h"
#include "workload/graph.h"

namespace orrery {
namespace {

using testing::TempDir;

Tick T(double x) { return static_cast<Tick>(x); }

constexpr uint64_t kAllGather = 2;  // Chakra CollectiveCommType ALL_GATHER
constexpr uint64_t kMiB = 1 << 20;

// An all-gather of `bytes` per NPU over all NPUs; `stream` < 0: no comm_stream attribute.
ChakraProtoMsg::Node AllGather(uint64_t id, uint64_t bytes, int stream) {
  ChakraProtoMsg::Node n = testing::CollNode(id, kAllGather, bytes);
  if (stream >= 0) testing::SetAttr(&n, "comm_stream", static_cast<uint64_t>(stream));
  return n;
}

// Two NPUs joined by one link each way (FullyConnected(2, 100 GB/s, 500 ns)), one
// chunk per collective, endpoint delay 10 ns (an all-gather reduces nothing); `active` chunks
// may run per dimension at once.
void WriteConfig(const TempDir& d, int active) {
  d.Write("network.yml", testing::NetworkYaml("FullyConnected", 2, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600, active));
}

// Two independent all-gathers of 1 MiB on both ranks, on streams `a` and `b`;
// `observe`: every rank's collectives, the critical path and the timeline too
// (into `timeline`), every rank simulated.
Result<RunReport> TwoAllGathers(int a, int b, int active, const std::string& backend, bool observe = false,
                                std::string* timeline = nullptr) {
  TempDir d;
  WriteConfig(d, active);
  testing::WriteTraces(d, 2, [&](int) {
    return std::vector<ChakraProtoMsg::Node>{AllGather(0, kMiB, a), AllGather(1, kMiB, b)};
  });
  if (!observe) return testing::RunIn(d, backend);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.run.backend = backend;
  c.run.symmetry = SymmetryMode::kOff;
  c.observe.all_collectives = true;
  c.observe.critical_path = true;
  c.observe.timeline_path = d.File("timeline.json");
  auto r = RunSimulation(c, DefaultBackends());
  if (timeline) *timeline = testing::ReadFileText(d.File("timeline.json"));
  return r;
}

// A ring all-gather on 2 NPUs is one step: each rank sends its 1 MiB to the
// other over its own link. The packet's bundle takes the endpoint delay (10 ns)
// before the send and again after the message arrives (ASTRA-sim's packet
// bundles, system/algorithms.cc). On the congestion-aware backend a link is a
// FIFO server: busy ser = trunc(bytes / bw) per message, and a message arrives
// trunc(500 + bytes / bw) after it starts on the link.
//   Alone:        sent at 10, arrives at 10 + comm, ends at comm + 20,
//                 comm = trunc(500 + 2^20 / bw).
//   Two streams:  both issue at t = 0 (A first, lowest id); with 2 active chunks
//                 per dimension both chunks run, and both messages want each
//                 rank's one link at 10: A's ends at comm + 20; B's starts when
//                 A's has left the link, at 10 + ser, and ends at ser + comm + 20.
//   One stream:   B issues when A ends (comm + 20): ends at 2 (comm + 20).
TEST(CommStreams, TwoCollectivesOnTwoStreamsShareALink) {
  const double bpns = GiBpsToBytesPerNs(100);
  const Tick ser = T(kMiB / bpns);
  const Tick comm = T(500 + kMiB / bpns);
  auto streams = TwoAllGathers(0, 1, 2, "congestion-aware");
  ASSERT_TRUE(streams.ok()) << streams.status().message();
  for (int r = 0; r < 2; ++r) EXPECT_EQ(streams->per_npu[r].finished_ns, ser + comm + 20) << "rank " << r;
  // The union of the two in flight: from 0 to B's end.
  EXPECT_EQ(streams->per_npu[0].comm_ns, ser + comm + 20);
  ASSERT_EQ(streams->collectives.size(), 2u);
  EXPECT_EQ(streams->collectives[0].start_ns, 0u);
  EXPECT_EQ(streams->collectives[0].end_ns, comm + 20);
  EXPECT_EQ(streams->collectives[1].start_ns, 0u);
  EXPECT_EQ(streams->collectives[1].end_ns, ser + comm + 20);

  // Every rank's records, the critical path and the timeline keep the two apart.
  std::string timeline;
  auto seen = TwoAllGathers(0, 1, 2, "congestion-aware", true, &timeline);
  ASSERT_TRUE(seen.ok()) << seen.status().message();
  const std::vector<CollectiveReport> all = testing::EveryRankCollectives(seen.value());
  ASSERT_EQ(all.size(), 4u);
  for (const CollectiveReport& c : all) {
    EXPECT_EQ(c.start_ns, 0u);
    EXPECT_EQ(c.end_ns, c.node_id == 0 ? comm + 20 : ser + comm + 20) << "rank " << c.rank << " node " << c.node_id;
  }
  // The path: rank 0's B from 0 to its end (nothing before it), one segment.
  const CriticalPath& path = seen->critical_path;
  ASSERT_EQ(path.segments.size(), 1u);
  EXPECT_EQ(path.segments[0].node_id, 1u);
  EXPECT_EQ(path.segments[0].start_ns, 0u);
  EXPECT_EQ(path.segments[0].end_ns, ser + comm + 20);
  // Stream 1 has a track of its own (tid 10, the first after the fixed ones) beside communication (tid 2).
  EXPECT_NE(timeline.find(R"("tid":10,"args":{"name":"communication stream 1"})"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find(R"("cat":"collective","ph":"X","ts":0.000,"dur":)"), std::string::npos);
  EXPECT_NE(timeline.find(R"("pid":0,"tid":2,"args":{"node":0)"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find(R"("pid":0,"tid":10,"args":{"node":1)"), std::string::npos) << timeline;

  auto one = TwoAllGathers(0, 0, 2, "congestion-aware");
  ASSERT_TRUE(one.ok()) << one.status().message();
  for (int r = 0; r < 2; ++r) EXPECT_EQ(one->per_npu[r].finished_ns, 2 * (comm + 20)) << "rank " << r;
  // No attribute: stream 0, the same as one stream.
  auto none = TwoAllGathers(-1, -1, 2, "congestion-aware");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->per_npu[0].finished_ns, 2 * (comm + 20));
}

// Each stream has its own queues in the system layer: with the default one
// active chunk per dimension, B's chunk still runs beside A's (they share only
// the link: ends as with two active chunks, ser + comm + 20), while two
// collectives on one stream take turns (2 (comm + 20)).
TEST(CommStreams, EachStreamHasItsOwnQueues) {
  const double bpns = GiBpsToBytesPerNs(100);
  const Tick ser = T(kMiB / bpns);
  const Tick comm = T(500 + kMiB / bpns);
  auto r = TwoAllGathers(0, 1, 1, "congestion-aware");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, ser + comm + 20);
  ASSERT_EQ(r->collectives.size(), 2u);
  EXPECT_EQ(r->collectives[1].start_ns, 0u);
  EXPECT_EQ(r->collectives[1].end_ns, ser + comm + 20);
  auto one = TwoAllGathers(0, 0, 1, "congestion-aware");
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->per_npu[0].finished_ns, 2 * (comm + 20));
}

// Four NPUs on FullyConnected(4, 100 GB/s, 500 ns); groups A {0, 1} and B {2, 3}
// on stream `tp`, C {0, 2} and D {1, 3} on stream `dp` (flat rings, all in the
// first dimension's queue). Each rank issues its two all-gathers of 1 MiB after
// 1 us of compute each (one compute slot: at 1 and 2 us), in an order that makes the ranks out of step:
//   rank 0: C, then A   rank 1: A, then D   rank 2: B, then C   rank 3: D, then B
// Had the streams shared one queue (one active chunk), each rank's first chunk
// would hold it while waiting for a peer whose queue holds that peer's first
// chunk: 0 -> 2 -> 3 -> 1 -> 0, a deadlock. With a queue per stream every
// collective runs when issued. In each, one member issues at 1 us, the other at
// 2 us; the early one sends at 1,010 and receives the late one's message
// (sent at 2,010) at 2,010 + comm, ending at 2,020 + comm; the late one finds
// the early message there (1,010 + comm > 2,010) and ends at 1,020 + comm. Every
// rank is the early member of one collective: all finish at 2,020 + comm.
TEST(CommStreams, RanksOutOfStepOnTwoStreamsDoNotDeadlock) {
  const Tick comm = T(500 + kMiB / GiBpsToBytesPerNs(100));
  auto run = [&](int tp, int dp) {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("FullyConnected", 4, 100, 500));
    d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600, 1));
    d.Write("groups.json", R"({"A": [0, 1], "B": [2, 3], "C": [0, 2], "D": [1, 3]})");
    const char* first[] = {"C", "A", "B", "D"};
    const char* second[] = {"A", "D", "C", "B"};
    testing::WriteTraces(d, 4, [&](int r) {
      std::vector<ChakraProtoMsg::Node> nodes;
      uint64_t id = 0;
      for (const char* group : {first[r], second[r]}) {
        auto comp = testing::MakeNode(id++, ChakraProtoMsg::COMP_NODE);
        comp.set_duration_micros(1);  // one compute slot: the second ends at 2 us
        auto coll = AllGather(id++, kMiB, group[0] == 'A' || group[0] == 'B' ? tp : dp);
        testing::SetAttr(&coll, "pg_name", std::string(group));
        coll.add_data_deps(comp.id());
        nodes.push_back(comp);
        nodes.push_back(coll);
      }
      return nodes;
    });
    return testing::RunInWithGroups(d);
  };
  auto streams = run(0, 1);
  ASSERT_TRUE(streams.ok()) << streams.status().message();
  for (int r = 0; r < 4; ++r) EXPECT_EQ(streams->per_npu[r].finished_ns, 2020 + comm) << "rank " << r;
  // On one stream the trace itself deadlocks (each rank's first collective
  // holds its one slot): reported, with the ranks that wait. (The four ranks'
  // graphs are equal up to groups of one shape: rank classes, which would
  // mirror rank 2 running C first, must see that it runs B there.)
  auto one = run(0, 0);
  ASSERT_FALSE(one.ok()) << one->symmetry_note;
  EXPECT_NE(one.status().message().find("deadlock"), std::string::npos) << one.status().message();
}

// collective-sm-fraction: a roofline kernel issued while a collective of its
// rank is in flight has (1 - f) of the compute roof (NCCL's kernels hold f of
// the SMs). Peak 100 TFLOP/s, f = 0.2, kernels of 8·10^8 FLOPs over 1,000
// bytes (compute-bound): node 1 starts at 0 beside the all-gather (node 0,
// stream 1) and takes 8·10^8 / (0.8 · 10^14) s = 10,000 ns; node 2 waits for the
// all-gather and runs alone, 8,000 ns. Without the key both take 8,000 ns.
TEST(CommStreams, AKernelBesideACollectiveHasTheSmsTheCollectiveLeaves) {
  auto run = [](const std::string& extra) {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("FullyConnected", 2, 100, 500));
    d.Write("system.json",
            testing::SystemJson("ring", 1, 10, 1000, 1, ", \"roofline-enabled\": 1, \"peak-perf\": 100" + extra));
    testing::WriteTraces(d, 2, [&](int) {
      std::vector<ChakraProtoMsg::Node> nodes = {AllGather(0, kMiB, 1)};
      for (uint64_t id : {1, 2}) {
        auto k = testing::MakeNode(id, ChakraProtoMsg::COMP_NODE);
        testing::SetAttr(&k, "num_ops", uint64_t{800000000});
        testing::SetAttr(&k, "tensor_size", uint64_t{1000});
        if (id == 2) k.add_data_deps(0);
        nodes.push_back(k);
      }
      return nodes;
    });
    return testing::RunIn(d, "analytical", "off");
  };
  auto shared = run(", \"collective-sm-fraction\": 0.2");
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  const Tick ag = T(500 + kMiB / GiBpsToBytesPerNs(100)) + 20;  // the all-gather's end (above)
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(shared->per_npu[r].compute_ns, 10000u + 8000u) << "rank " << r;
    EXPECT_EQ(shared->per_npu[r].finished_ns, ag + 8000) << "rank " << r;
  }
  auto alone = run("");
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->per_npu[0].compute_ns, 8000u + 8000u);
  auto bad = run(", \"collective-sm-fraction\": 0.96");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("collective-sm-fraction"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("0.96"), std::string::npos) << bad.status().message();
}

// Rank 0: an all-gather of 1 MiB (stream 0) and a send of 64 KiB to rank 1;
// rank 1: the all-gather and the receive. Analytical backend: a message takes
// trunc(500 + bytes / bw), no link is shared.
//   All-gather: ends at ag = trunc(500 + 2^20 / bw) + 20 on both ranks (10 ns
//     endpoint delay before its send and after its arrival, as above).
//   Send on stream 4: issues at 0 beside the all-gather, delivered at
//     d = trunc(500 + 2^16 / bw) < ag: rank 0 finishes at ag, and rank 1's
//     receive (no slot, posted at 0) ends at d; rank 1 finishes at ag.
//   Send on stream 0: waits for the all-gather's slot, issues at ag, delivered
//     at ag + d: both ranks finish at ag + d.
TEST(CommStreams, ASendOnItsOwnStreamProceedsWhileACollectiveIsInFlight) {
  const double bpns = GiBpsToBytesPerNs(100);
  const Tick ag = T(500 + kMiB / bpns) + 20;
  const Tick d = T(500 + (64 << 10) / bpns);
  ASSERT_LT(d, ag);
  for (int stream : {4, 0}) {
    TempDir dir;
    WriteConfig(dir, 1);
    testing::WriteTraces(dir, 2, [&](int r) {
      std::vector<ChakraProtoMsg::Node> nodes{AllGather(0, kMiB, 0)};
      auto n = testing::MakeNode(1, r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      testing::SetAttr(&n, r == 0 ? "comm_dst" : "comm_src", static_cast<uint64_t>(1 - r));
      testing::SetAttr(&n, "comm_size", uint64_t{64} << 10);
      testing::SetAttr(&n, "comm_tag", uint64_t{7});
      if (r == 0) testing::SetAttr(&n, "comm_stream", static_cast<uint64_t>(stream));
      nodes.push_back(n);
      return nodes;
    });
    auto rep = testing::RunIn(dir);
    ASSERT_TRUE(rep.ok()) << rep.status().message();
    const Tick expected = stream == 4 ? ag : ag + d;
    EXPECT_EQ(rep->per_npu[0].finished_ns, expected) << "stream " << stream;
    EXPECT_EQ(rep->per_npu[1].finished_ns, expected) << "stream " << stream;
  }
}

// Ranks whose traces differ only in a node's stream are not symmetric: the
// auto run says so and simulates every rank. Analytical backend, 2 active
// chunks, the all-gathers above (comm = trunc(500 + 2^20 / bw), 10 ns endpoint
// delay before each send and after each arrival). Rank 0 has B on stream 0,
// rank 1 on stream 1.
//   Rank 1: A and B issue at 0 and send at 10; A ends at comm + 20. B's chunk
//     waits for rank 0's B message.
//   Rank 0: A ends at comm + 20; B issues then, sends at comm + 30, and finds
//     rank 1's B message already there (arrived at 10 + comm): ends at comm + 40.
//   Rank 1's B: rank 0's message arrives at 2 comm + 30, ends at 2 comm + 40.
TEST(CommStreams, RanksThatDifferInAStreamAreNotSymmetric) {
  const double bpns = GiBpsToBytesPerNs(100);
  const Tick comm = T(500 + kMiB / bpns);
  TempDir d;
  WriteConfig(d, 2);
  testing::WriteTraces(d, 2, [&](int r) {
    return std::vector<ChakraProtoMsg::Node>{AllGather(0, kMiB, 0), AllGather(1, kMiB, r)};
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->symmetric);
  EXPECT_NE(FormatReportText(r.value()).find("rank 1's trace differs from rank 0's at node 1 (comm_stream)"),
            std::string::npos)
      << FormatReportText(r.value());
  EXPECT_EQ(r->per_npu[0].finished_ns, comm + 40);
  EXPECT_EQ(r->per_npu[1].finished_ns, 2 * comm + 40);
}

// The attribute is read checked: an integer in 0..7 on collectives, sends and
// memory nodes; the error names the file, node, rank, field, value and range.
TEST(CommStreams, AnOutOfRangeOrNonIntegerStreamIsRefused) {
  TempDir d;
  const std::string path = d.File("trace.0.et");
  auto load = [&](const ChakraProtoMsg::AttributeProto& attr) {
    EtWriter w;
    EXPECT_TRUE(w.Open(path, ChakraProtoMsg::GlobalMetadata()).ok());
    ChakraProtoMsg::Node n = testing::CollNode(5, kAllGather, 64);
    *n.add_attr() = attr;
    EXPECT_TRUE(w.Write(n).ok());
    EXPECT_TRUE(w.Close().ok());
    GraphLoadOptions lo;
    lo.num_npus = 2;
    lo.num_dims = 1;
    return LoadNpuGraph(path, 0, lo);
  };
  ChakraProtoMsg::AttributeProto a;
  a.set_name("comm_stream");
  a.set_uint64_val(8);
  auto r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            path + ": node 5 (rank 0): comm_stream = 8: out of range; allowed: an integer >= 0 and <= 7");
  a.set_int64_val(-1);
  r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            path + ": node 5 (rank 0): comm_stream = -1: negative; allowed: an integer >= 0 and <= 7");
  a.set_double_val(1.5);
  r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path + ": node 5 (rank 0): comm_stream = 1.5"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("allowed: an integer >= 0 and <= 7"), std::string::npos) << r.status().message();
  a.set_string_val("dp");
  r = load(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            path +
                ": node 5 (rank 0): comm_stream = \"dp\": a string, not an integer; allowed: an integer >= 0 and <= 7");
  a.set_uint64_val(7);
  r = load(a);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->nodes[0].comm_stream, 7);
}

}  // namespace
}  // namespace orrery
