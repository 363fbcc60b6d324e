// Rank classes (run/rank_classes.h): ranks whose graphs are equal up to
// renaming on equivalent network positions are simulated once per class.
// Every test compares against the full engine (--symmetry=off), field by
// field for every rank: the class path must change nothing but the speed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "extern/chakra.pb.h"
#include "gen/gen_source.h"
#include "tests/run/pipeline_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::CollNode;
using testing::MakeNode;
using testing::SetAttr;
using testing::TempDir;

// Every per-rank field, the per-dimension traffic, the message count and
// every rank's collectives agree.
// `same_ids`: the ranks' node ids agree (a class run reports each rank's
// collectives with its representative's node ids and names).
void ExpectSameAsFull(const RunReport& classes, const RunReport& full, bool same_ids = true) {
  ASSERT_EQ(classes.per_npu.size(), full.per_npu.size());
  for (size_t r = 0; r < full.per_npu.size(); ++r) {
    const NpuReport& a = classes.per_npu[r];
    const NpuReport& b = full.per_npu[r];
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.finished_ns, b.finished_ns) << "rank " << r;
    EXPECT_EQ(a.compute_ns, b.compute_ns) << "rank " << r;
    EXPECT_EQ(a.comm_ns, b.comm_ns) << "rank " << r;
    EXPECT_EQ(a.remote_mem_ns, b.remote_mem_ns) << "rank " << r;
    EXPECT_EQ(a.peak_local_bytes, b.peak_local_bytes) << "rank " << r;
    EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns) << "rank " << r;
    EXPECT_EQ(a.mem_stall_ns, b.mem_stall_ns) << "rank " << r;
    EXPECT_EQ(a.peer_wait_ns, b.peer_wait_ns) << "rank " << r;
    EXPECT_EQ(a.idle_ns, b.idle_ns) << "rank " << r;
  }
  EXPECT_EQ(classes.messages, full.messages);
  ASSERT_EQ(classes.dims.size(), full.dims.size());
  for (size_t d = 0; d < full.dims.size(); ++d) {
    EXPECT_EQ(classes.dims[d].messages, full.dims[d].messages) << "dim " << d;
    EXPECT_EQ(classes.dims[d].bytes, full.dims[d].bytes) << "dim " << d;
    EXPECT_EQ(classes.dims[d].busy_ns, full.dims[d].busy_ns) << "dim " << d;
  }
  const std::vector<CollectiveReport> all_classes = testing::EveryRankCollectives(classes);
  const std::vector<CollectiveReport> all_full = testing::EveryRankCollectives(full);
  ASSERT_EQ(all_classes.size(), all_full.size());
  for (size_t i = 0; i < all_full.size(); ++i) {
    const CollectiveReport& a = all_classes[i];
    const CollectiveReport& b = all_full[i];
    EXPECT_EQ(a.rank, b.rank);
    if (same_ids) {
      EXPECT_EQ(a.node_id, b.node_id);
    }
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.algorithm, b.algorithm);
    EXPECT_EQ(a.start_ns, b.start_ns) << "rank " << a.rank << " node " << a.node_id;
    EXPECT_EQ(a.end_ns, b.end_ns) << "rank " << a.rank << " node " << a.node_id;
  }
  EXPECT_EQ(FormatReportCsv(classes), FormatReportCsv(full));
}

// Runs `c` with classes allowed and with --symmetry=off.
std::pair<RunReport, RunReport> RunBoth(RunConfig c) {
  c.observe.all_collectives = true;
  auto with = RunSimulation(c, DefaultBackends());
  EXPECT_TRUE(with.ok()) << with.status().message();
  c.run.symmetry = SymmetryMode::kOff;
  auto off = RunSimulation(c, DefaultBackends());
  EXPECT_TRUE(off.ok()) << off.status().message();
  if (!with.ok() || !off.ok()) return {};
  EXPECT_EQ(off->rank_classes, 0);
  return {with.value(), off.value()};
}

const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "preferred-dataset-splits": 4})";

// A generated pipeline, 32 NPUs (TP 2 x PP 4 x DP 4, 1F1B): the generator's
// classes are the four stages; each rank gets its stage representative's numbers.
void GeneratedPipeline(const std::string& network) {
  TempDir d;
  d.Write("system.json", kSystem);
  auto source = gen::GeneratedSource("--model=llama3-8b --tp=2 --pp=4 --dp=4 --microbatches=6 --recompute=full");
  ASSERT_TRUE(source.ok()) << source.status().message();
  RunConfig c;
  c.source = source.value();
  c.files.system = d.File("system.json");
  c.files.network = network;
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 4) << with.symmetry_note;
  EXPECT_NE(with.symmetry_note.find("4 rank classes"), std::string::npos) << with.symmetry_note;
  // The stages differ: not every rank has rank 0's numbers.
  int distinct = 0;
  for (const NpuReport& n : with.per_npu) {
    distinct += n.finished_ns != with.per_npu[0].finished_ns || n.comm_ns != with.per_npu[0].comm_ns;
  }
  EXPECT_GT(distinct, 0);
  ExpectSameAsFull(with, off);
}

TEST(RankClasses, GeneratedPipelineEqualsFullEngine3D) {
  GeneratedPipeline("Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)_Switch(4,25GB/s,5us)");
}

TEST(RankClasses, GeneratedPipelineEqualsFullEngine2D) {
  // DP groups are four ranks of a Switch(16) (not whole dimensions): a flat ring, still uniform.
  GeneratedPipeline("Ring(2,300GB/s,500ns)_Switch(16,50GB/s,2us)");
}

// Context parallelism: ring-attention messages go to cp + 1 (wrapping), so
// the peer's rank offset depends on the rank. The generator's stage classes
// are split by their peers' network distances (hops per dimension); where CP
// is a whole Ring dimension the distances agree; where it is part of a Switch
// the peer is at +1 or -1, both two hops: the stages stay classes, and the
// pair's exchange is mirrored from the message's real sender (the peer).
TEST(RankClasses, GeneratedContextParallelEqualsFullEngine) {
  TempDir d;
  d.Write("system.json", kSystem);
  auto source = gen::GeneratedSource("--model=llama3-8b --tp=2 --pp=4 --dp=2 --cp=2 --microbatches=2 --zero=3");
  ASSERT_TRUE(source.ok()) << source.status().message();
  RunConfig c;
  c.source = source.value();
  c.files.system = d.File("system.json");
  c.files.network = "Ring(2,300GB/s,500ns)_Ring(2,300GB/s,500ns)_Switch(2,50GB/s,2us)_Switch(4,50GB/s,2us)";
  // Under ASTRA-sim's group model (the default) the groups of several whole
  // dimensions run as flat rings, taken as not uniform: the stages split in two.
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 8) << with.symmetry_note;
  ExpectSameAsFull(with, off);
  // Under the hierarchical model they run per dimension: one class per stage.
  std::string hierarchical = kSystem;
  hierarchical.insert(hierarchical.rfind('}'), R"(, "group-collective-model": "hierarchical")");
  d.Write("system.json", hierarchical);
  auto [hier, hier_off] = RunBoth(c);
  EXPECT_EQ(hier.rank_classes, 4) << hier.symmetry_note;
  ExpectSameAsFull(hier, hier_off);
  d.Write("system.json", kSystem);
  c.files.network = "Ring(2,300GB/s,500ns)_Switch(16,50GB/s,2us)";
  auto [flat, flat_off] = RunBoth(c);
  EXPECT_EQ(flat.rank_classes, 4) << flat.symmetry_note;
  ExpectSameAsFull(flat, flat_off);
  // On a RingUni dimension the two directions differ (1 hop and 15): the
  // classes split by direction, and the groups over them (flat rings, not
  // uniform) span classes; still on the class path, every rank exact.
  c.files.network = "Ring(2,300GB/s,500ns)_RingUni(16,50GB/s,2us)";
  auto [uni, uni_off] = RunBoth(c);
  EXPECT_GT(uni.rank_classes, 4) << uni.symmetry_note;
  ExpectSameAsFull(uni, uni_off);
}

// TP 2 x CP 2 on a Switch(4), DP 4 x PP 2 on a Switch(8): the gradient group
// over DP x CP holds ranks {t + 2c + 4d} (c < 2, d < 4), part of both
// dimensions, so the engine runs a flat ring over it whose links alternate
// between one and two dimensions. The CP halves see different neighbours:
// each stage splits into two classes that share the ring; a message to a
// member that is not simulated goes to its class's representative, which
// stands at the same place in the ring. Every rank equals the full engine.
TEST(RankClasses, FlatRingSpanningTwoClassesEqualsFullEngine) {
  TempDir d;
  d.Write("system.json", kSystem);
  for (const char* zero : {"0", "3"}) {
    auto source = gen::GeneratedSource(
        std::string("--model=llama3-8b --tp=2 --cp=2 --dp=4 --pp=2 --microbatches=2 --recompute=full "
                    "--order=tp-cp-ep-dp-pp --zero=") +
        zero);
    ASSERT_TRUE(source.ok()) << source.status().message();
    RunConfig c;
    c.source = source.value();
    c.files.system = d.File("system.json");
    c.files.network = "Switch(4,300GB/s,1us)_Switch(8,25GB/s,2us)";
    auto [with, off] = RunBoth(c);
    // Two stages, each split into its CP halves.
    EXPECT_EQ(with.rank_classes, 4) << with.symmetry_note;
    ExpectSameAsFull(with, off);
  }
}

// Under the hierarchical model a grid group across nodes runs per dimension
// (system/comm_group.h): DP 8 beside TP 2 on Switch(8) x Switch(2) holds 4
// ranks of each node, the gradient group over DP x CP above 2 of each
// Switch(4) and 4 of the Switch(8). Every member runs the same phases over
// members at equal distances, so the groups are uniform: one class per
// stage, and every rank equals the full engine.
TEST(RankClasses, GridGroupsUnderTheHierarchicalModelEqualFullEngine) {
  TempDir d;
  std::string hierarchical = kSystem;
  hierarchical.insert(hierarchical.rfind('}'), R"(, "group-collective-model": "hierarchical")");
  d.Write("system.json", hierarchical);
  struct Case {
    const char* gen;
    const char* network;
    int classes;
  } cases[] = {
      {"--model=llama3-8b --tp=2 --dp=8 --microbatches=2 --recompute=full",
       "Switch(8,300GB/s,1us)_Switch(2,25GB/s,2us)", 1},
      {"--model=llama3-8b --tp=2 --cp=2 --dp=4 --pp=2 --microbatches=2 --recompute=full --order=tp-cp-ep-dp-pp",
       "Switch(4,300GB/s,1us)_Switch(8,25GB/s,2us)", 2},
  };
  for (const Case& k : cases) {
    auto source = gen::GeneratedSource(k.gen);
    ASSERT_TRUE(source.ok()) << source.status().message();
    RunConfig c;
    c.source = source.value();
    c.files.system = d.File("system.json");
    c.files.network = k.network;
    auto [with, off] = RunBoth(c);
    EXPECT_EQ(with.rank_classes, k.classes) << k.gen << ": " << with.symmetry_note;
    ExpectSameAsFull(with, off);
    // The gradient all-reduce ran per dimension: ring on each, not the flat group's ring.
    bool per_dim = false;
    for (const auto& coll : off.collectives) per_dim |= coll.algorithm == "ALL_REDUCE:ring,ALL_REDUCE:ring";
    EXPECT_TRUE(per_dim) << k.gen;
  }
}

// CP 4 over ranks {0, 4, 8, 12} of Switch(8) x Switch(2) (TP 2, DP 2 inside,
// order tp-dp-cp): the ring-attention ring alternates one-dimension and
// two-dimension links, so even and odd CP positions differ, and each
// exchanges messages with two members of the other kind. A message to a
// member that is not simulated goes to its class's representative (its
// sender's representative standing for the real sender). The ZeRO-3 group
// over DP x CP is a flat ring 2d + 4c ordered (d, c) = (0,0) (1,0) (0,1) ...
// whose two-dimension links are 6 -> 8 and 14 -> 0: (d, c even) splits into
// d = 0 (a two-dimension link in) and d = 1 (none), (d, c odd) into d = 1
// (one out) and d = 0 (none): 4 classes. Every rank equals the full engine.
TEST(RankClasses, ContextParallelRingAcrossTwoDimensionsEqualsFullEngine) {
  TempDir d;
  d.Write("system.json", kSystem);
  auto source = gen::GeneratedSource(
      "--model=llama3-8b --tp=2 --cp=4 --dp=2 --microbatches=2 --recompute=full "
      "--zero=3 --order=tp-dp-cp-ep-pp");
  ASSERT_TRUE(source.ok()) << source.status().message();
  RunConfig c;
  c.source = source.value();
  c.files.system = d.File("system.json");
  c.files.network = "Switch(8,300GB/s,1us)_Switch(2,25GB/s,2us)";
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 4) << with.symmetry_note;
  ExpectSameAsFull(with, off);
}

const char* const kSystem2D = testing::kPipelineSystem2D;

TEST(RankClasses, TracesDifferingInNodeIdsAndPeersTakeTheClassPath) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  auto [with, off] = RunBoth(testing::PipelineTraceConfig(d, true));
  EXPECT_EQ(with.rank_classes, 2) << with.symmetry_note;
  EXPECT_FALSE(with.symmetric);
  // Stage 1 starts after the first activation arrives: its ranks finish with
  // their own numbers, not stage 0's.
  EXPECT_NE(with.per_npu[0].compute_ns, with.per_npu[4].compute_ns);
  EXPECT_EQ(with.per_npu[0].compute_ns, 2 * (10 + 20) * 1000u);
  EXPECT_EQ(with.per_npu[4].compute_ns, 2 * (12 + 24) * 1000u);
  ExpectSameAsFull(with, off, /*same_ids=*/false);
  // The report says how many classes ran.
  EXPECT_NE(FormatReportText(with).find("rank classes: 2 rank classes"), std::string::npos);
}

TEST(RankClasses, StragglerInAllReduceGroupFallsBackWithTheReason) {
  TempDir d;
  testing::WritePipelineTraces(d, true, /*slow=*/2, /*slow_us=*/12);
  auto [with, off] = RunBoth(testing::PipelineTraceConfig(d, true));
  EXPECT_EQ(with.rank_classes, 0);
  // Rank 2 leaves stage 0's class, and stage 0's all-reduce cannot span two classes.
  EXPECT_NE(with.symmetry_note.find("rank classes: communicator group 0 spans rank classes"), std::string::npos)
      << with.symmetry_note;
  ExpectSameAsFull(with, off, /*same_ids=*/false);
}

TEST(RankClasses, StragglerSplitsItsClassAndItsPeersClass) {
  TempDir d;
  testing::WritePipelineTraces(d, false, /*slow=*/1, /*slow_us=*/12);
  auto [with, off] = RunBoth(testing::PipelineTraceConfig(d, false));
  // {0, 2, 3}, {1}, {4, 6, 7}, {5}: rank 5 waits for the straggler's messages.
  EXPECT_EQ(with.rank_classes, 4) << with.symmetry_note;
  EXPECT_NE(with.symmetry_note.find("1 split off by the classes of their peers"), std::string::npos)
      << with.symmetry_note;
  EXPECT_NE(with.per_npu[5].finished_ns, with.per_npu[4].finished_ns);
  ExpectSameAsFull(with, off, /*same_ids=*/false);
}

// A heterogeneity file's compute speeds (--heterogeneity) split the classes
// like a straggler in the traces: a slow rank is a class of its own, the rank
// it exchanges with follows; the others stay folded.
TEST(RankClasses, ASlowRankInTheHeterogeneityFileSplitsItsClassAndItsPeersClass) {
  TempDir d;
  testing::WritePipelineTraces(d, false);
  d.Write("het.yml", "compute:\n  - ranks: [1]\n    speed: 0.8\n");
  RunConfig c = testing::PipelineTraceConfig(d, false);
  c.files.heterogeneity = d.File("het.yml");
  auto [with, off] = RunBoth(c);
  // {0, 2, 3}, {1}, {4, 6, 7}, {5}: 10 us at 0.8 is 12.5 us.
  EXPECT_EQ(with.rank_classes, 4) << with.symmetry_note;
  EXPECT_NE(with.symmetry_note.find("4 rank classes"), std::string::npos) << with.symmetry_note;
  EXPECT_NE(with.symmetry_note.find("1 split off by their --heterogeneity compute speed; 1 split off by the classes "
                                    "of their peers"),
            std::string::npos)
      << with.symmetry_note;
  EXPECT_EQ(with.per_npu[1].compute_ns, 2 * (12500 + 25000u));
  EXPECT_EQ(with.per_npu[0].compute_ns, 2 * (10000 + 20000u));
  EXPECT_NE(with.per_npu[5].finished_ns, with.per_npu[4].finished_ns);
  ExpectSameAsFull(with, off, /*same_ids=*/false);
}

// A whole class at one speed (every rank of stage 1 at half speed) splits
// nothing: the stages stay two classes, each data-parallel all-reduce inside one.
TEST(RankClasses, AClassAtOneSpeedStaysFolded) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  d.Write("het.yml", "compute:\n  - ranks: \"4-7\"\n    speed: 0.5\n");
  RunConfig c = testing::PipelineTraceConfig(d, true);
  c.files.heterogeneity = d.File("het.yml");
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 2) << with.symmetry_note;
  EXPECT_EQ(with.symmetry_note.find("split off"), std::string::npos) << with.symmetry_note;
  EXPECT_EQ(with.per_npu[4].compute_ns, 2 * (24000 + 48000u));
  ExpectSameAsFull(with, off, /*same_ids=*/false);
}

// A slow rank inside a data-parallel group: its group's all-reduce would span
// two classes, so the full engine runs and says why; a link at its own
// bandwidth rules classes out (positions that look equivalent would differ).
TEST(RankClasses, HeterogeneityThatClassesCannotFoldFallsBackWithTheReason) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  RunConfig c = testing::PipelineTraceConfig(d, true);
  c.files.heterogeneity = d.File("het.yml");
  d.Write("het.yml", "compute:\n  - ranks: [2]\n    speed: 0.8\n");
  auto [slow, slow_off] = RunBoth(c);
  EXPECT_EQ(slow.rank_classes, 0);
  EXPECT_NE(slow.symmetry_note.find("rank classes: communicator group 0 spans rank classes"), std::string::npos)
      << slow.symmetry_note;
  ExpectSameAsFull(slow, slow_off, /*same_ids=*/false);
  d.Write("het.yml", "links:\n  - ranks: [2]\n    dim: 0\n    bandwidth: 0.5\n");
  auto [link, link_off] = RunBoth(c);
  EXPECT_EQ(link.rank_classes, 0);
  EXPECT_NE(link.symmetry_note.find("--heterogeneity gives NPU links their own bandwidth"), std::string::npos)
      << link.symmetry_note;
  ExpectSameAsFull(link, link_off, /*same_ids=*/false);
}

// Equal graphs up to groups of one shape are not enough: rank 2 runs its
// first collective on C = {0, 2} while rank 0 runs A = {0, 1} there, so a
// class that mirrored rank 0's partner would invent rank 2's collective. The
// ranks of each group must run it at the same place; here they do not, and
// the full engine runs (rank 2 waits for rank 0's C, which comes after A).
TEST(RankClasses, RanksThatRunAGroupAtDifferentPlacesFallBack) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("FullyConnected", 4, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  d.Write("groups.json", R"({"A": [0, 1], "B": [2, 3], "C": [0, 2], "D": [1, 3]})");
  const char* order[][2] = {{"A", "C"}, {"A", "D"}, {"C", "B"}, {"D", "B"}};
  testing::WriteTraces(d, 4, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t i = 0; i < 2; ++i) {
      auto n = CollNode(i, 2, 1 << 20);  // ALL_GATHER
      SetAttr(&n, "pg_name", std::string(order[r][i]));
      if (i > 0) n.add_data_deps(0);
      nodes.push_back(n);
    }
    return nodes;
  });
  RunConfig c = testing::PipelineTraceConfig(d, true);
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 0);
  EXPECT_NE(with.symmetry_note.find("rank classes: 1 of communicator group 2's 2 ranks run their collective #1 on it "
                                    "(the others run that collective on another group of its shape)"),
            std::string::npos)
      << with.symmetry_note;
  ExpectSameAsFull(with, off);
  // Rank 0 ends with C (after A); rank 2 runs B after that same C.
  EXPECT_GT(with.per_npu[2].finished_ns, with.per_npu[0].finished_ns);
}

// Point-to-point inside one class: every rank of a Ring(8) computes, sends
// to its right neighbour and receives from its left one. One class; each
// send is modelled by the message the left neighbour sends at the same time.
TEST(RankClasses, MessagesInsideAClassAreMirrored) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, 50, 700));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1000));
  testing::WriteTraces(d, 8, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    const uint64_t base = 10 * static_cast<uint64_t>(r);
    auto comp = MakeNode(base, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(3);
    auto send = MakeNode(base + 1, ChakraProtoMsg::COMM_SEND_NODE);
    SetAttr(&send, "comm_dst", static_cast<uint64_t>((r + 1) % 8));
    SetAttr(&send, "comm_size", uint64_t{1} << 16);
    send.add_data_deps(base);
    auto recv = MakeNode(base + 2, ChakraProtoMsg::COMM_RECV_NODE);
    SetAttr(&recv, "comm_src", static_cast<uint64_t>((r + 7) % 8));
    SetAttr(&recv, "comm_size", uint64_t{1} << 16);
    auto after = MakeNode(base + 3, ChakraProtoMsg::COMP_NODE);
    after.set_duration_micros(2);
    after.add_data_deps(base + 2);
    return std::vector<ChakraProtoMsg::Node>{comp, send, recv, after};
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 1) << with.symmetry_note;
  // Hand-derived: 3 us compute, then the neighbour's 64 KiB over one hop
  // (700 ns + 65536 B / 50 GiB/s = 1220.7 -> 1220 ns), then 2 us compute.
  EXPECT_EQ(with.per_npu[5].finished_ns, 3000u + 700u + 1220u + 2000u);
  EXPECT_EQ(with.messages, 8u);
  ExpectSameAsFull(with, off, /*same_ids=*/false);
}

// A representative that talks to two ranks of one class: they cannot both
// be simulated as that class's representative, so the run falls back.
TEST(RankClasses, TwoPeersInOneClassFallBack) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Switch, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 2000 ]\n");
  d.Write("system.json", kSystem2D);
  std::vector<testing::P2PMsg> msgs;
  for (int r = 0; r < 4; ++r) msgs.push_back({r, 4 + r, 1 << 20, 1});
  for (int r = 0; r < 4; ++r) msgs.push_back({r, 4 + (r + 1) % 4, 1 << 10, 2});
  testing::WriteP2PTraces(d, 8, msgs);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 0);
  EXPECT_NE(with.symmetry_note.find("rank classes: rank 0 (representing class 0) exchanges messages with rank 5, but "
                                    "rank 4 represents its class"),
            std::string::npos)
      << with.symmetry_note;
  ExpectSameAsFull(with, off, /*same_ids=*/false);
}

// Every rank different: reading stops once more than half the ranks are
// classes of their own (the classes would hold as many graphs as the full run).
TEST(RankClasses, MostlyDistinctRanksFallBackEarly) {
  TempDir d;
  testing::WritePipelineTraces(d, false);
  // Overwrite with traces whose compute differs on every rank.
  testing::WriteTraces(d, 8, [](int r) {
    auto n = MakeNode(0, ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(1 + static_cast<uint64_t>(r));
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  RunConfig c = testing::PipelineTraceConfig(d, true);  // groups: the symmetric path declines, classes are tried
  auto [with, off] = RunBoth(c);
  EXPECT_EQ(with.rank_classes, 0);
  // More than half of 8 is 5: the fifth distinct graph is rank 4's.
  EXPECT_NE(with.symmetry_note.find("rank classes: more than half the ranks differ from every other (5 distinct "
                                    "graphs up to rank 4)"),
            std::string::npos)
      << with.symmetry_note;
  ExpectSameAsFull(with, off);
}

TEST(RankClasses, CongestionAwareBackendFallsBack) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  RunConfig c = testing::PipelineTraceConfig(d, true);
  c.run.backend = "congestion-aware";
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rank_classes, 0);
  EXPECT_NE(r->symmetry_note.find("rank classes: backend congestion-aware is not symmetric"), std::string::npos)
      << r->symmetry_note;
}

// The JSON report's class summaries, by hand: the two stages of the pipeline
// traces (ranks 0-3 and 4-7, one all-reduce each), then the straggler's four
// classes {0, 2, 3}, {1}, {4, 6, 7}, {5} (no collectives); finished times and
// collective durations are the full engine's.
TEST(RankClasses, JsonReportSummarisesEachClass) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  auto [with, off] = RunBoth(testing::PipelineTraceConfig(d, true));
  ASSERT_EQ(with.rank_classes, 2) << with.symmetry_note;
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(with));
  const std::vector<CollectiveReport> full = testing::EveryRankCollectives(off);
  ASSERT_EQ(full.size(), 8u);  // one all-reduce per rank
  auto ns = [&](int rank) { return full[rank].end_ns - full[rank].start_ns; };
  const nlohmann::json want = {{{"class", 0},
                                {"representative", 0},
                                {"members", 4},
                                {"ranks", "0-3"},
                                {"finished_ns", off.per_npu[0].finished_ns},
                                {"collectives", 1},
                                {"collective_ns", ns(0)}},
                               {{"class", 1},
                                {"representative", 4},
                                {"members", 4},
                                {"ranks", "4-7"},
                                {"finished_ns", off.per_npu[4].finished_ns},
                                {"collectives", 1},
                                {"collective_ns", ns(4)}}};
  EXPECT_EQ(j.at("classes"), want);
  EXPECT_EQ(j.at("collective_totals"), nlohmann::json({{"count", 8}, {"duration_ns", 4 * ns(0) + 4 * ns(4)}}));
  EXPECT_EQ(j.at("collectives").size(), 1u);  // rank 0's
  EXPECT_FALSE(nlohmann::json::parse(FormatReportJson(off)).contains("classes"));

  TempDir s;
  testing::WritePipelineTraces(s, false, /*slow=*/1, /*slow_us=*/12);
  auto [split, split_off] = RunBoth(testing::PipelineTraceConfig(s, false));
  ASSERT_EQ(split.rank_classes, 4) << split.symmetry_note;
  const nlohmann::json k = nlohmann::json::parse(FormatReportJson(split)).at("classes");
  ASSERT_EQ(k.size(), 4u);
  const char* ranks[] = {"0,2-3", "1", "4,6-7", "5"};
  const int reps[] = {0, 1, 4, 5}, members[] = {3, 1, 3, 1};
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(k[c].at("ranks"), ranks[c]) << c;
    EXPECT_EQ(k[c].at("representative"), reps[c]) << c;
    EXPECT_EQ(k[c].at("members"), members[c]) << c;
    EXPECT_EQ(k[c].at("finished_ns"), split_off.per_npu[reps[c]].finished_ns) << c;
    EXPECT_EQ(k[c].at("collectives"), 0) << c;
  }
}

// --collectives=FILE.csv of a run by classes, streamed from the two
// representatives' records, equals the table written out by hand: each rank
// the rows of its stage's representative (rank 0 for 0-3, rank 4 for 4-7),
// with its own rank and the representative's node id.
TEST(RankClasses, CollectivesCsvGivesEachRankItsRepresentativesRows) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  auto [with, off] = RunBoth(testing::PipelineTraceConfig(d, true));
  ASSERT_EQ(with.rank_classes, 2) << with.symmetry_note;
  ASSERT_EQ(with.all_collectives.simulated.size(), 2u);  // the representatives' only
  const CollectiveReport& a = with.all_collectives.simulated[0];
  const CollectiveReport& b = with.all_collectives.simulated[1];
  ASSERT_EQ(a.rank, 0);
  ASSERT_EQ(b.rank, 4);
  std::string want = "rank,node_id,name,type,bytes,algorithm,start_ns,end_ns,duration_ns\n";
  for (int r = 0; r < 8; ++r) {
    const CollectiveReport& c = r < 4 ? a : b;
    want += std::to_string(r) + "," + std::to_string(c.node_id) + "," + c.name + ",ALL_REDUCE,8388608," + c.algorithm +
            "," + std::to_string(c.start_ns) + "," + std::to_string(c.end_ns) + "," +
            std::to_string(c.end_ns - c.start_ns) + "\n";
  }
  EXPECT_EQ(testing::CollectivesCsv(with), want);
  // The node ids are the representatives' (rank 0 numbers from 1000, rank 4 from 1148); the times every rank's own.
  EXPECT_EQ(a.node_id, 1000u + 8);
  EXPECT_EQ(b.node_id, 1000u + 37 * 4 + 8);
  for (const CollectiveReport& c : testing::EveryRankCollectives(off)) {
    EXPECT_EQ(c.start_ns, (c.rank < 4 ? a : b).start_ns) << "rank " << c.rank;
    EXPECT_EQ(c.end_ns, (c.rank < 4 ? a : b).end_ns) << "rank " << c.rank;
  }
}

}  // namespace
}  // namespace orrery
