// The critical path (--critical-path) on small hand-built graphs. Every
// expected segment and total is derived by hand in the comment above its test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::MakeNode;
using testing::TempDir;
using Nodes = std::vector<ChakraProtoMsg::Node>;

ChakraProtoMsg::Node Comp(uint64_t id, uint64_t us, std::vector<uint64_t> deps = {}, const std::string& name = "") {
  auto n = MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(us);
  for (uint64_t p : deps) n.add_data_deps(p);
  if (!name.empty()) n.set_name(name);
  return n;
}

ChakraProtoMsg::Node Dep(ChakraProtoMsg::Node n, std::vector<uint64_t> deps) {
  for (uint64_t p : deps) n.add_data_deps(p);
  return n;
}

ChakraProtoMsg::Node P2P(uint64_t id, bool send, int peer, uint64_t bytes, std::vector<uint64_t> deps = {}) {
  auto n = MakeNode(id, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  testing::SetAttr(&n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(peer));
  testing::SetAttr(&n, "comm_size", bytes);
  testing::SetAttr(&n, "comm_tag", uint64_t{0});
  return Dep(n, deps);
}

Result<RunReport> RunCp(const TempDir& d, const std::string& mem_yaml = "") {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  if (!mem_yaml.empty()) {
    d.Write("mem.yml", mem_yaml);
    c.files.memory_config = d.File("mem.yml");
  }
  c.observe.critical_path = true;
  return RunSimulation(c, DefaultBackends());
}

Tick Category(const CriticalPath& p, const std::string& name) {
  for (const PathShare& s : p.categories) {
    if (s.category == name) return s.ns;
  }
  return 0;
}

// The segments tile [0, finished] with no gap and no overlap, and the categories sum to it.
void ExpectTiles(const CriticalPath& p) {
  Tick t = 0, sum = 0;
  for (const PathSegment& s : p.segments) {
    EXPECT_EQ(s.start_ns, t) << s.kind << " " << s.node_id;
    EXPECT_GT(s.end_ns, s.start_ns);
    t = s.end_ns;
  }
  EXPECT_EQ(t, p.finished_ns);
  for (const PathShare& c : p.categories) sum += c.ns;
  EXPECT_EQ(sum, p.finished_ns);
}

// GPU compute only, on every rank: 1 (5 us); 2 (3 us) after 1; 3 (2 us) with no
// dependency; 4 (4 us) after 2 and 3. Ready nodes issue smallest id first, one at
// a time on the GPU: 1 [0,5000], 2 [5000,8000] (ready at 5000, before 3 by id),
// 3 [8000,10000] (ready at 0, waited for the GPU that 2 held), 4 [10000,14000]
// (its last dependency, 3, ended at 10000). Path: 1, 2, 3, 4; all compute, 14000 ns.
TEST(CriticalPath, PureComputeChainFollowsDependenciesAndTheGpuSlot) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(d, 2, [](int) { return Nodes{Comp(1, 5), Comp(2, 3, {1}), Comp(3, 2), Comp(4, 4, {2, 3})}; });
  auto r = RunCp(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  EXPECT_EQ(p.rank, 0);
  EXPECT_TRUE(p.representative);  // identical traces: rank 0 simulated for both
  EXPECT_EQ(p.finished_ns, 14000u);
  ASSERT_EQ(p.segments.size(), 4u);
  const uint64_t ids[] = {1, 2, 3, 4};
  const Tick ends[] = {5000, 8000, 10000, 14000};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(p.segments[i].node_id, ids[i]);
    EXPECT_EQ(p.segments[i].end_ns, ends[i]);
    EXPECT_EQ(p.segments[i].kind, "compute");
  }
  ASSERT_EQ(p.categories.size(), 1u);
  EXPECT_EQ(Category(p, "compute"), 14000u);
  ExpectTiles(p);
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("bottleneck: compute: 100.0% of the critical path"), std::string::npos) << text;
  EXPECT_NE(text.find("\ncritical path: 100.0% compute\n"), std::string::npos) << text;
  EXPECT_NE(FormatReportJson(r.value()).find("\"critical_path\""), std::string::npos);
}

// Node 1 computes 10 us; then an all-reduce (node 2) and compute node 3 run side
// by side; node 4 (5 us) needs both. With node 3 at 20 us, a 1 KiB all-reduce on
// two NPUs (two ring steps of 512 B: about 1 us each) is hidden: the path is 1, 3,
// 4, all compute, 10000 + 20000 + 5000 = 35000 ns. With node 3 at 1 us and a
// 1 MiB all-reduce (at 50 GB/s over 20 us) the all-reduce is exposed: the path is
// 1 (compute 10000), the all-reduce (its whole run, D = end - start from the
// collectives table), 4 (compute 5000): finished = 15000 + D.
TEST(CriticalPath, OverlappedCommunicationIsOffThePathExposedIsOn) {
  for (bool exposed : {false, true}) {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
    d.Write("system.json", testing::SystemJson("ring", 1, 10, 50));
    testing::WriteTraces(d, 2, [&](int) {
      return Nodes{Comp(1, 10), Dep(testing::CollNode(2, 0, exposed ? 1048576 : 1024), {1}),
                   Comp(3, exposed ? 1 : 20, {1}), Comp(4, 5, {2, 3})};
    });
    auto r = RunCp(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const CriticalPath& p = r->critical_path;
    ExpectTiles(p);
    if (!exposed) {
      EXPECT_EQ(p.finished_ns, 35000u);
      EXPECT_EQ(Category(p, "compute"), 35000u);
      ASSERT_EQ(p.segments.size(), 3u);
      EXPECT_EQ(p.segments[1].node_id, 3u);
      continue;
    }
    ASSERT_EQ(r->collectives.size(), 1u);
    const Tick ar = r->collectives[0].end_ns - r->collectives[0].start_ns;
    EXPECT_EQ(r->collectives[0].start_ns, 10000u);
    EXPECT_GT(ar, 1000u);
    EXPECT_EQ(p.finished_ns, 15000u + ar);
    EXPECT_EQ(Category(p, "compute"), 15000u);
    EXPECT_EQ(Category(p, "communication dim0 (Ring)"), ar);
    ASSERT_EQ(p.segments.size(), 3u);
    EXPECT_EQ(p.segments[1].kind, "ALL_REDUCE");
    EXPECT_EQ(p.segments[1].start_ns, 10000u);
    const std::string text = FormatReportText(r.value());
    if (ar > 15000) {
      EXPECT_NE(text.find("bottleneck: communication dim0 (Ring): "), std::string::npos) << text;
    }
  }
}

// Four NPUs: rank 2 computes 30 us before a 1 KiB all-reduce, the others 10 us;
// rank 0 then computes 5 us more, so it finishes last (the all-reduce ends within
// a microsecond or so on every rank). Rank 0's all-reduce could not finish before
// rank 2 joined at 30000: the path is rank 2's compute [0, 30000] (waiting on
// another rank, 30000 ns), the all-reduce from 30000 to its end E on rank 0
// (communication), rank 0's last compute [E, E + 5000]. Rank 0's own 10 us of
// compute is off the path.
TEST(CriticalPath, StragglerRankIsFollowedAsWaitingOnAnotherRank) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 50));
  testing::WriteTraces(d, 4, [](int r) {
    Nodes v{Comp(1, r == 2 ? 30 : 10, {}, "fwd"), Dep(testing::CollNode(2, 0, 1024), {1})};
    if (r == 0) v.push_back(Comp(3, 5, {2}));
    return v;
  });
  auto r = RunCp(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  ASSERT_EQ(p.rank, 0);
  EXPECT_FALSE(p.representative);
  ExpectTiles(p);
  ASSERT_EQ(r->collectives.size(), 1u);
  const Tick e = r->collectives[0].end_ns;
  EXPECT_EQ(p.finished_ns, e + 5000);
  EXPECT_EQ(Category(p, "waiting on another rank"), 30000u);
  EXPECT_EQ(Category(p, "communication dim0 (Ring)"), e - 30000);
  EXPECT_EQ(Category(p, "compute"), 5000u);
  ASSERT_EQ(p.other_ranks.size(), 1u);
  EXPECT_EQ(p.other_ranks[0].first, 2);
  EXPECT_EQ(p.other_ranks[0].second, 30000u);
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_EQ(p.segments[0].rank, 2);
  EXPECT_EQ(p.segments[0].activity, "compute");
  EXPECT_EQ(p.segments[1].start_ns, 30000u);
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("bottleneck: straggler rank 2 (its compute): "), std::string::npos) << text;
}

// A balanced three-stage chain: each rank computes 10 us, rank 0 then rank 1
// pass a 1-byte message on. The path ends on rank 2 and spends most of its
// time waiting on ranks 0 and 1, which did the same compute as rank 2: the
// bottleneck line names the rank it waited on, not a straggler.
TEST(CriticalPath, ABalancedPipelineHasNoStraggler) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 50));
  testing::WriteTraces(d, 4, [](int r) {
    if (r == 0) return Nodes{Comp(1, 10, {}), P2P(2, true, 1, 1, {1})};
    if (r == 1) return Nodes{P2P(1, false, 0, 1), Comp(2, 10, {1}), P2P(3, true, 2, 1, {2})};
    if (r == 2) return Nodes{P2P(1, false, 1, 1), Comp(2, 10, {1})};
    return Nodes{};
  });
  auto r = RunCp(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  ASSERT_EQ(p.rank, 2);
  ASSERT_EQ(p.categories.front().category, "waiting on another rank");
  const std::string text = FormatReportText(r.value());
  EXPECT_EQ(text.find("straggler"), std::string::npos) << text;
  EXPECT_NE(text.find("bottleneck: waiting on rank "), std::string::npos) << text;
}

// Each of two NPUs computes 10 us, loads 1e6 bytes from a shared pool (500 ns,
// 50 GB/s = 50 B/ns, fair sharing), then computes 5 us. Both loads run together
// at 25 B/ns: 500 + 1e6 / 25 = 40500 ns. Path: compute [0, 10000], memory [10000,
// 50500], compute [50500, 55500]: compute 15000, memory 40500.
TEST(CriticalPath, MemoryBoundLoadIsMemory) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(d, 2, [](int) {
    auto load = MakeNode(2, ChakraProtoMsg::MEM_LOAD_NODE);
    testing::SetAttr(&load, "tensor_size", uint64_t{1000000});
    return Nodes{Comp(1, 10), Dep(load, {1}), Comp(3, 5, {2})};
  });
  auto r = RunCp(d, "backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\nsharing: fair\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  EXPECT_EQ(p.finished_ns, 55500u);
  EXPECT_EQ(Category(p, "compute"), 15000u);
  EXPECT_EQ(Category(p, "memory"), 40500u);
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_EQ(p.segments[1].kind, "mem_load");
  EXPECT_EQ(p.segments[1].start_ns, 10000u);
  ExpectTiles(p);
  EXPECT_NE(FormatReportText(r.value()).find("bottleneck: memory: 73.0% of the critical path"), std::string::npos);
}

// Two pipeline stages on Ring(2, 50 GB/s, 500 ns), two micro-batches of 1 MiB
// activations. One message takes X = trunc(500 + 1048576 / 53.6870912) = 20031 ns
// (50 GB/s is 50 * 2^30 bytes per second).
// Rank 0: F0a [0,10000]; send a [10000, 30031]; F0b [10000, 20000]; send b ready
//   at 20000 but the communication slot is send a's until 30031: [30031, 50062].
// Rank 1: recv a and recv b posted at 0; recv a ends 30031; F1a [30031, 50031];
//   recv b ends 50062; F1b (after F1a and recv b) [50062, 70062]. Rank 1 ends last.
// Path: F1b (compute 20000) <- recv b's message [30031, 50062] (communication
// dim0, 20031) <- send b waited for the slot: send a [10000, 30031] on rank 0 <-
// F0a [0, 10000] on rank 0; 30031 ns waiting on another rank.
TEST(CriticalPath, PipelineCrossesToTheSenderThroughItsSlot) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  const uint64_t mib = 1048576;
  testing::WriteTraces(d, 2, [&](int r) {
    if (r == 0)
      return Nodes{Comp(1, 10, {}, "F0a"), P2P(2, true, 1, mib, {1}), Comp(3, 10, {1}, "F0b"),
                   P2P(4, true, 1, mib, {3})};
    return Nodes{P2P(1, false, 0, mib), Comp(2, 20, {1}, "F1a"), P2P(3, false, 0, mib), Comp(4, 20, {2, 3}, "F1b")};
  });
  auto r = RunCp(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  ASSERT_EQ(p.rank, 1);
  EXPECT_EQ(p.finished_ns, 70062u);
  EXPECT_EQ(Category(p, "compute"), 20000u);
  EXPECT_EQ(Category(p, "communication dim0 (Ring)"), 20031u);
  EXPECT_EQ(Category(p, "waiting on another rank"), 30031u);
  ASSERT_EQ(p.segments.size(), 4u);
  EXPECT_EQ(p.segments[0].name, "F0a");
  EXPECT_EQ(p.segments[0].rank, 0);
  EXPECT_EQ(p.segments[1].kind, "send");
  EXPECT_EQ(p.segments[1].node_id, 2u);
  EXPECT_EQ(p.segments[1].end_ns, 30031u);
  EXPECT_EQ(p.segments[2].kind, "recv");
  EXPECT_EQ(p.segments[2].node_id, 3u);
  EXPECT_EQ(p.segments[2].rank, 1);
  EXPECT_EQ(p.segments[3].name, "F1b");
  ExpectTiles(p);
}

// A collective on two dimensions is split by the dimension its chunk is on. One
// chunk (1 split) of a 1 MiB all-reduce on Ring(2, 50 GB/s, 500 ns) x Ring(2,
// 25 GB/s, 500 ns), baseline: an all-reduce on dim0, then one on dim1, each of
// 2 NPUs. README's ring formula for one phase of p NPUs, m = 1 MiB / p bytes per
// step: 10 + 2(p-1) * (trunc(500 + m / B) + 10) + (p-1) * 3 * floor(m / 50),
// with B the link's bytes per ns (GB = 2^30 B) and local-mem-bw 50:
//   dim0: m = 524288, B = 53.6870912: wire 10265; 10 + 2 * 10275 + 31455 = 52015 ns
//   dim1: B = 26.8435456: wire 20031; 10 + 2 * 20041 + 31455 = 71547 ns
TEST(CriticalPath, CollectiveIsSplitByTheDimensionItsChunksAreOn) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Ring ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "endpoint-delay": 10, "local-mem-bw": 50,
                             "all-reduce-implementation": ["ring", "ring"]})");
  testing::WriteTraces(d, 4, [](int) { return Nodes{testing::CollNode(1, 0, 1048576)}; });
  auto r = RunCp(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  EXPECT_EQ(p.finished_ns, 52015u + 71547u);
  EXPECT_EQ(Category(p, "communication dim0 (Ring)"), 52015u);
  EXPECT_EQ(Category(p, "communication dim1 (Ring)"), 71547u);
  ASSERT_EQ(p.segments.size(), 2u);
  EXPECT_EQ(p.segments[0].node_id, p.segments[1].node_id);
  ExpectTiles(p);
}

// Iterations: the path of the last iteration continues into the previous one.
// One rank's graph is a single 5 us compute; three iterations: 15000 ns of compute.
TEST(CriticalPath, IterationsChainThroughEachOther) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(d, 2, [](int) { return Nodes{Comp(1, 5)}; });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.observe.critical_path = true;
  c.run.iterations = 3;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_EQ(p.segments[2].iteration, 2);
  EXPECT_EQ(Category(p, "compute"), 15000u);
  ExpectTiles(p);
}

// A data-parallel group strided across a dimension is not a set of whole
// dimensions, so its collectives run as one flat ring over its ranks; the path
// names the dimension its members differ in. Ring(2, 50 GB/s, 500 ns) x Ring(4,
// 25 GB/s, 500 ns), rank = c0 + 2 c1; groups {0,2} {1,3} {4,6} {5,7}: each pair
// differs in dim1 only (c1 0 and 1; dim1 has 4 NPUs, so not a whole dimension).
// Every rank computes 10 us, then all-reduces 1 MiB in its group: a ring of
// p = 2, one chunk, endpoint delay 0, reduction free (local-mem-bw huge):
// 2(p-1) steps of trunc(500 + 524288 / 26.8435456) = trunc(20031.25) = 20031 ns
// (one hop on dim1, 25 GB/s = 25 * 2^30 B/s): 40062 ns. Path: compute 10000,
// communication dim1 (Ring) 40062; finished 50062. Before, a flat group's
// collective was plain "communication".
TEST(CriticalPath, StridedDataParallelGroupIsNamedByTheDimensionItSpans) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Ring ]\nnpus_count: [ 2, 4 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "endpoint-delay": 0, "local-mem-bw": 1000000000,
                             "all-reduce-implementation": ["ring", "ring"]})");
  d.Write("groups.json", R"({"dp0": [0, 2], "dp1": [1, 3], "dp2": [4, 6], "dp3": [5, 7]})");
  testing::WriteTraces(d, 8, [](int r) {
    auto ar = testing::CollNode(2, 0, 1048576);
    testing::SetAttr(&ar, "pg_name", "dp" + std::to_string((r % 2) + 2 * (r / 4)));
    return Nodes{Comp(1, 10), Dep(ar, {1})};
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = d.File("groups.json");
  c.observe.critical_path = true;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CriticalPath& p = r->critical_path;
  EXPECT_EQ(p.finished_ns, 50062u);
  EXPECT_EQ(Category(p, "compute"), 10000u);
  EXPECT_EQ(Category(p, "communication dim1 (Ring)"), 40062u);
  EXPECT_EQ(Category(p, "communication"), 0u);
  ASSERT_EQ(p.segments.size(), 2u);
  EXPECT_EQ(p.segments[1].kind, "ALL_REDUCE");
  ExpectTiles(p);
}

// The command line: the embedded data-parallel example (symmetric, 8 NPUs on a
// ring): 4 forward layers of 500 us, 4 backward of 1000 us, each followed by a
// 1 MiB all-reduce that the next backward layer hides, except the last. The path
// is all compute (6000000 ns) but the last all-reduce (117780 ns, the README's
// worked example): 6000000 / 6117780 = 98.1% compute.
TEST(CriticalPath, CommandLinePrintsItForTheExample) {
  const std::string cmd = std::string(ORRERY_BIN) + " run --example=data-parallel --critical-path";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0);
  EXPECT_NE(out.find("bottleneck: compute: 98.1% of the critical path"), std::string::npos) << out;
  EXPECT_NE(out.find("\ncritical path: 98.1% compute, 1.9% communication dim0 (Ring)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  compute                                         6000000 ns  98.1%\n"), std::string::npos)
      << out;
}

TEST(CriticalPath, OffByDefaultAndTheReportIsUnchanged) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(d, 2, [](int) { return Nodes{Comp(1, 5)}; });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->critical_path.rank, -1);
  EXPECT_EQ(FormatReportText(r.value()).find("critical path"), std::string::npos);
  EXPECT_EQ(FormatReportJson(r.value()).find("critical_path"), std::string::npos);
}

// On every conformance case (ASTRA-sim's inputs): the path tiles [0, finished]
// of the NPU that finishes last, and that NPU is the one the report names.
TEST(CriticalPath, TilesTheFinishedTimeOnConformanceCases) {
  const std::string conf = std::string(ORRERY_SHARED_DIR) + "/conformance/astra-sim";
  std::ifstream in(conf + "/expected.tsv");
  if (!in) GTEST_SKIP() << "no conformance data at " << conf;
  std::string line;
  std::getline(in, line);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(conf.c_str()), 0);
  int checked = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) c.push_back(x);
    if (c[0].find("custom") != std::string::npos) continue;
    RunConfig cfg;
    cfg.run.backend = c[1];
    cfg.files.workload_prefix = c[2];
    cfg.files.network = c[3];
    cfg.files.system = c[4];
    cfg.files.remote_memory = c[5];
    cfg.observe.critical_path = true;
    auto r = RunSimulation(cfg, DefaultBackends());
    ASSERT_TRUE(r.ok()) << c[0] << ": " << r.status().message();
    SCOPED_TRACE(c[0]);
    EXPECT_EQ(r->critical_path.finished_ns, testing::MaxFinished(r.value()));
    ExpectTiles(r->critical_path);
    ++checked;
  }
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_GT(checked, 40);
}

}  // namespace
}  // namespace orrery
