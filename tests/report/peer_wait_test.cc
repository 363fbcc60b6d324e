// Waiting on a peer (docs/report.md, "What a report holds"): a receive posted
// before its send started waits on the peer until the send starts, and is
// communication from then on. Every expected value is derived by hand in the
// comment above its test, or from the pipeline's closed form (p-1)/(m+p-1).
#include <gtest/gtest.h>

#include "core/tick.h"
#include "gen/gen_source.h"
#include "gen/strategy.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::MakeNode;
using testing::TempDir;
using Nodes = std::vector<ChakraProtoMsg::Node>;

ChakraProtoMsg::Node Comp(uint64_t id, uint64_t us, std::vector<uint64_t> deps = {}) {
  auto n = MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(us);
  for (uint64_t p : deps) n.add_data_deps(p);
  return n;
}

ChakraProtoMsg::Node P2P(uint64_t id, bool send, int peer, uint64_t bytes, std::vector<uint64_t> deps = {}) {
  auto n = MakeNode(id, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  testing::SetAttr(&n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(peer));
  testing::SetAttr(&n, "comm_size", bytes);
  testing::SetAttr(&n, "comm_tag", uint64_t{0});
  for (uint64_t p : deps) n.add_data_deps(p);
  return n;
}

Tick Sum(const NpuReport& n) { return n.compute_ns + n.exposed_comm_ns + n.mem_stall_ns + n.peer_wait_ns + n.idle_ns; }

// Ring(2, 50 GB/s, 500 ns), one chunk: a 1 MiB message takes
// X = trunc(500 + 1048576 / 53.6870912) = 20031 ns (50 GB/s is 50 * 2^30 B/s).
Result<RunReport> RunTwoRanks(const TempDir& d, const std::function<Nodes(int)>& nodes) {
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(d, 2, nodes);
  return testing::RunIn(d);
}

constexpr uint64_t kMiB = 1048576;
constexpr Tick kX = 20031;

// Rank 0 computes 10 us, then sends 1 MiB [10000, 30031]; rank 1 posts its
// receive at 0. Rank 1: waiting on its peer [0, 10000], communication
// [10000, 30031]: peer wait 10000, exposed communication 20031, idle 0.
// Rank 0: compute 10000, then the send: exposed communication 20031.
TEST(PeerWait, ReceivePostedBeforeTheSendWaitsUntilTheSendStarts) {
  TempDir d;
  auto r = RunTwoRanks(d, [](int rank) {
    return rank == 0 ? Nodes{Comp(1, 10), P2P(2, true, 1, kMiB, {1})} : Nodes{P2P(1, false, 0, kMiB)};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const NpuReport& r1 = r->per_npu[1];
  EXPECT_EQ(r1.finished_ns, 10000 + kX);
  EXPECT_EQ(r1.peer_wait_ns, 10000u);
  EXPECT_EQ(r1.exposed_comm_ns, kX);
  EXPECT_EQ(r1.compute_ns, 0u);
  EXPECT_EQ(r1.idle_ns, 0u);
  // ASTRA-sim's communication time still counts the whole receive.
  EXPECT_EQ(r1.comm_ns, 10000 + kX);
  const NpuReport& r0 = r->per_npu[0];
  EXPECT_EQ(r0.peer_wait_ns, 0u);
  EXPECT_EQ(r0.compute_ns, 10000u);
  EXPECT_EQ(r0.exposed_comm_ns, kX);
  for (const NpuReport& n : r->per_npu) EXPECT_EQ(Sum(n), n.finished_ns) << n.rank;
  // Rank 1 waits 33.3% of its time, more than anything else: the bubble is its bottleneck.
  EXPECT_NE(FormatReportJson(r.value()).find("\"peer_wait_ns\": 10000"), std::string::npos);
  EXPECT_NE(FormatReportCsv(r.value()).find("\n1,30031,0,30031,20031,0,0,0,10000\n"), std::string::npos)
      << FormatReportCsv(r.value());
}

// Rank 0 sends 1 MiB at 0 [0, 20031]; rank 1 computes 10 us and posts its
// receive at 10000, after the send started: no peer wait; the receive is
// communication [10000, 20031] (exposed 10031), compute 10000.
TEST(PeerWait, SendStartedBeforeTheReceiveWasPostedGivesNoPeerWait) {
  TempDir d;
  auto r = RunTwoRanks(d, [](int rank) {
    return rank == 0 ? Nodes{P2P(1, true, 1, kMiB)} : Nodes{Comp(1, 10), P2P(2, false, 0, kMiB, {1})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const NpuReport& r1 = r->per_npu[1];
  EXPECT_EQ(r1.finished_ns, kX);
  EXPECT_EQ(r1.peer_wait_ns, 0u);
  EXPECT_EQ(r1.compute_ns, 10000u);
  EXPECT_EQ(r1.exposed_comm_ns, kX - 10000);
  EXPECT_EQ(r1.idle_ns, 0u);
  for (const NpuReport& n : r->per_npu) EXPECT_EQ(Sum(n), n.finished_ns) << n.rank;
}

// Two stages, two micro-batches of 1 MiB (tests/report/critical_path_test.cc's
// pipeline): rank 0: F0a [0,10000], send a [10000,30031], F0b [10000,20000],
// send b waits for the slot: [30031,50062]. Rank 1 posts both receives at 0;
// F1a [30031,50031], F1b [50062,70062].
// Rank 1: [0,10000] both receives wait: peer wait 10000; [10000,30031] recv a
// is communication (recv b still waits, communication comes first); F1a
// computes [30031,50031] (recv b, whose send started at 30031, underneath);
// [50031,50062] recv b exposed; F1b [50062,70062]. So compute 40000, exposed
// 20031 + 31 = 20062, peer wait 10000, idle 0; 70062 in all.
// Rank 0: compute 20000, exposed [20000,50062] = 30062, no receive: no peer wait.
TEST(PeerWait, TwoStagePipelineByHand) {
  TempDir d;
  auto r = RunTwoRanks(d, [](int rank) {
    if (rank == 0) return Nodes{Comp(1, 10), P2P(2, true, 1, kMiB, {1}), Comp(3, 10, {1}), P2P(4, true, 1, kMiB, {3})};
    return Nodes{P2P(1, false, 0, kMiB), Comp(2, 20, {1}), P2P(3, false, 0, kMiB), Comp(4, 20, {2, 3})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const NpuReport& r1 = r->per_npu[1];
  EXPECT_EQ(r1.finished_ns, 70062u);
  EXPECT_EQ(r1.compute_ns, 40000u);
  EXPECT_EQ(r1.exposed_comm_ns, 20062u);
  EXPECT_EQ(r1.peer_wait_ns, 10000u);
  EXPECT_EQ(r1.idle_ns, 0u);
  const NpuReport& r0 = r->per_npu[0];
  EXPECT_EQ(r0.finished_ns, 50062u);
  EXPECT_EQ(r0.compute_ns, 20000u);
  EXPECT_EQ(r0.exposed_comm_ns, 30062u);
  EXPECT_EQ(r0.peer_wait_ns, 0u);
  EXPECT_EQ(r0.idle_ns, 0u);
}

// A compute-only pipeline generated by gen/strategy.h (tests/gen/
// gen_pipeline_test.cc's tiny model, identical stages, messages of 0 ns: on a
// 1e9 GB/s ring with 0 latency and endpoint delay 0 a message of s·h·2 = 2048
// bytes takes trunc(0 + 2048 / (1e9 · 2^30 / 1e9)) = trunc(1.9e-6) = 0 ns; a
// send's delivery is then an event at its start): F and B per micro-batch and stage, iteration
// T = (m+p-1)(F+B). Every receive is posted at 0, so all of a stage's time
// that is not compute waits on a peer. The last micro-batch's backward leaves
// stage k at T - kB (it crosses k stages of B each to reach stage 0), so stage
// k's peer wait is T - kB - m(F+B); stage 0's is (p-1)(F+B), the bubble
// (p-1)/(m+p-1) of the iteration.
class PipelinePeerWait : public ::testing::TestWithParam<std::tuple<gen::Schedule, int64_t, int64_t>> {};

TEST_P(PipelinePeerWait, StageWaitsEqualTheBubble) {
  const auto [schedule, p, m] = GetParam();
  const gen::ModelDesc model = gen::testing::TinyModel(p, 16);
  gen::Strategy s;
  s.pp = p;
  s.microbatches = m;
  s.schedule = schedule;
  s.lm_head = false;
  auto w = gen::GenerateDense(model, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  TempDir d;
  auto r = gen::testing::SimulateOnRing(w.value(), d, 1e9, 0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // One layer per stage (b = 1, t = 1): attention and MLP blocks; backward twice the FLOPs.
  const uint64_t sl = model.seq_len, h = model.hidden, f = model.ffn;
  const uint64_t attn = 2 * sl * h * 3 * h + 2 * sl * h * h + 4 * sl * sl * h, mlp = 2 * sl * h * f * 2;
  const Tick F = gen::testing::RooflineNs(attn) + gen::testing::RooflineNs(mlp);
  const Tick B = gen::testing::RooflineNs(2 * attn) + gen::testing::RooflineNs(2 * mlp);
  const Tick T = static_cast<Tick>(m + p - 1) * (F + B);
  ASSERT_EQ(static_cast<int64_t>(r->per_npu.size()), p);
  for (const NpuReport& n : r->per_npu) {
    const Tick k = static_cast<Tick>(n.rank);
    EXPECT_EQ(n.finished_ns, T - k * B) << "stage " << k;
    EXPECT_EQ(n.compute_ns, static_cast<Tick>(m) * (F + B)) << "stage " << k;
    EXPECT_EQ(n.peer_wait_ns, T - k * B - static_cast<Tick>(m) * (F + B)) << "stage " << k;
    EXPECT_EQ(n.exposed_comm_ns, 0u) << "stage " << k;
    EXPECT_EQ(n.idle_ns, 0u) << "stage " << k;
  }
  const NpuReport& first = r->per_npu[0];
  EXPECT_EQ(first.peer_wait_ns, static_cast<Tick>(p - 1) * (F + B));
  // (p-1)/(m+p-1) of the iteration, compared as integers.
  EXPECT_EQ(first.peer_wait_ns * static_cast<Tick>(m + p - 1), static_cast<Tick>(p - 1) * T);
  // The bubble dominates exactly when p - 1 > m.
  const std::string text = FormatReportText(r.value());
  const bool bubble = p - 1 > m;
  EXPECT_EQ(text.find("bottleneck: pipeline bubble (of the slowest NPU's time: ") != std::string::npos, bubble) << text;
  EXPECT_EQ(text.find("bottleneck: compute (of the slowest NPU's time: ") != std::string::npos, !bubble) << text;
}

INSTANTIATE_TEST_SUITE_P(Schedules, PipelinePeerWait,
                         ::testing::Values(std::make_tuple(gen::Schedule::k1F1B, 4, 2),
                                           std::make_tuple(gen::Schedule::k1F1B, 4, 8),
                                           std::make_tuple(gen::Schedule::k1F1B, 5, 1),
                                           std::make_tuple(gen::Schedule::kGpipe, 4, 2),
                                           std::make_tuple(gen::Schedule::kGpipe, 3, 5)));

// Rank classes simulate one representative per pipeline stage; its receives
// match the sends that stand for its peers', so each rank's peer wait is the
// full engine's (PP 4 x DP 2 x CP 2: pipeline messages cross classes, the
// ring-attention messages stay inside one and are mirrored).
TEST(PeerWait, RankClassesGiveTheFullEnginesNumbers) {
  TempDir d;
  d.Write("tiny.yml", "name: tiny\nlayers: 4\nhidden: 64\nffn: 256\nheads: 4\nvocab: 128\nseq_len: 16\n");
  d.Write("system.json", R"({"roofline-enabled": 1, "peak-perf": 1, "local-mem-bw": 1000000000,
                             "preferred-dataset-splits": 1})");
  auto source = gen::GeneratedSource("--model=" + d.File("tiny.yml") + " --pp=4 --dp=2 --cp=2 --microbatches=2");
  ASSERT_TRUE(source.ok()) << source.status().message();
  RunConfig c;
  c.source = source.value();
  c.files.system = d.File("system.json");
  c.files.network = "Ring(4,100GB/s,500ns)_Ring(4,100GB/s,500ns)";
  auto classes = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(classes.ok()) << classes.status().message();
  EXPECT_GT(classes->rank_classes, 0) << classes->symmetry_note;
  c.run.symmetry = SymmetryMode::kOff;
  auto full = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(full.ok()) << full.status().message();
  ASSERT_EQ(classes->per_npu.size(), full->per_npu.size());
  Tick waited = 0;
  for (size_t i = 0; i < full->per_npu.size(); ++i) {
    const NpuReport& a = classes->per_npu[i];
    const NpuReport& b = full->per_npu[i];
    EXPECT_EQ(a.finished_ns, b.finished_ns) << i;
    EXPECT_EQ(a.peer_wait_ns, b.peer_wait_ns) << i;
    EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns) << i;
    EXPECT_EQ(a.idle_ns, b.idle_ns) << i;
    EXPECT_EQ(Sum(b), b.finished_ns) << i;
    waited += b.peer_wait_ns;
  }
  EXPECT_GT(waited, 0u);
  EXPECT_EQ(FormatReportCsv(classes.value()), FormatReportCsv(full.value()));
}

}  // namespace
}  // namespace orrery
