// The timeline and the critical path on a run by rank classes
// (run/class_observers.h): every case runs with classes and with
// --symmetry=off, and the timeline files and the critical paths (text and
// JSON) must be byte-identical. Where the observers cannot ride on the
// classes, the full engine runs and the report's note says why.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "extern/chakra.pb.h"
#include "gen/gen_source.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::CollNode;
using testing::MakeNode;
using testing::ReadFileText;
using testing::SetAttr;
using testing::TempDir;

// What the observers wrote: the timeline's bytes, and the critical path as
// the text report prints it and as the JSON report holds it.
struct Observed {
  RunReport report;
  std::string timeline, path_text, path_json;
};

Observed RunObserved(RunConfig c, const TempDir& d, const std::string& name, const std::string& ranks) {
  c.observe.timeline_path = d.File(name + ".json");
  c.observe.timeline_ranks = ranks;
  c.observe.critical_path = true;
  auto r = RunSimulation(c, DefaultBackends());
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  Observed o;
  o.report = r.value();
  o.timeline = ReadFileText(d.File(name + ".json"));
  const std::string text = FormatReportText(o.report);
  const size_t at = text.find("\ncritical path: ");
  EXPECT_NE(at, std::string::npos);
  o.path_text = at == std::string::npos ? "" : text.substr(at);
  o.path_json = nlohmann::json::parse(FormatReportJson(o.report))["critical_path"].dump(1);
  return o;
}

// Runs `c` with classes (expecting `classes` of them) and with --symmetry=off;
// the timelines of `ranks` and the critical paths must be the same bytes.
void ExpectSameObservers(RunConfig c, int classes, const std::string& ranks) {
  TempDir d;
  const Observed with = RunObserved(c, d, "classes", ranks);
  c.run.symmetry = SymmetryMode::kOff;
  const Observed off = RunObserved(c, d, "off", ranks);
  EXPECT_EQ(with.report.rank_classes, classes) << with.report.symmetry_note;
  EXPECT_EQ(off.report.rank_classes, 0);
  EXPECT_FALSE(with.timeline.empty());
  EXPECT_TRUE(with.timeline == off.timeline) << "the timelines differ";
  EXPECT_EQ(with.path_text, off.path_text);
  EXPECT_EQ(with.path_json, off.path_json);
  EXPECT_EQ(with.report.critical_path.finished_ns, off.report.critical_path.finished_ns);
}

const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "preferred-dataset-splits": 4})";

RunConfig Generated(const TempDir& d, const std::string& args, const std::string& network) {
  d.Write("system.json", kSystem);
  auto source = gen::GeneratedSource(args);
  EXPECT_TRUE(source.ok()) << source.status().message();
  RunConfig c;
  if (source.ok()) c.source = source.value();
  c.files.system = d.File("system.json");
  c.files.network = network;
  return c;
}

// A generated 1F1B pipeline with data parallelism (TP 2 x PP 4 x DP 4, 32
// NPUs): four stage classes; shown ranks from every stage, DP peers among them.
TEST(ClassObservers, GeneratedPipelineAndDataParallelEqualFullEngine) {
  TempDir d;
  const RunConfig c = Generated(d, "--model=llama3-8b --tp=2 --pp=4 --dp=4 --microbatches=6 --recompute=full",
                                "Ring(2,300GB/s,500ns)_Switch(16,50GB/s,2us)");
  ExpectSameObservers(c, 4, "0,1,2,8,9,16,24,31");
}

// TP 4 x PP 2 x DP 2 on a 3-D network, with sequence parallelism and ZeRO-1.
TEST(ClassObservers, GeneratedTensorPipelineDataParallelEqualFullEngine) {
  TempDir d;
  const RunConfig c =
      Generated(d, "--model=llama3-8b --tp=4 --pp=2 --dp=2 --microbatches=4 --sp --zero=1 --recompute=selective",
                "Ring(4,300GB/s,500ns)_Switch(2,50GB/s,2us)_Switch(2,25GB/s,5us)");
  ExpectSameObservers(c, 2, "0-3,5,9,12,15");
}

const char kSystem2D[] = R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 2, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
    "all-to-all-implementation": ["ring", "ring"], "collective-optimization": "localBWAware"})";

// Switch(4) x Ring(2) ASTRA-sim-style traces: a 2-stage pipeline (ranks 0-3,
// 4-7), two microbatches, a data-parallel all-reduce per stage; every rank
// numbers its nodes differently and names its own peer. `slow`: this rank
// computes `slow_us` instead of 10 us (a straggler).
void WritePipelineTraces(const TempDir& d, bool all_reduce, int slow = -1, uint64_t slow_us = 0) {
  d.Write("network.yml",
          "topology: [ Switch, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 2000 ]\n");
  d.Write("system.json", kSystem2D);
  d.Write("groups.json", R"({"dp0": [0, 1, 2, 3], "dp1": [4, 5, 6, 7]})");
  testing::WriteTraces(d, 8, [&](int r) {
    const bool first = r < 4;
    const int peer = first ? r + 4 : r - 4;
    uint64_t id = 1000 + 37 * static_cast<uint64_t>(r);
    std::vector<ChakraProtoMsg::Node> nodes;
    auto add = [&](ChakraProtoMsg::Node n, const std::string& name) {
      if (!nodes.empty()) n.add_data_deps(nodes.back().id());
      n.set_name(name + "@" + std::to_string(r));  // names differ per rank too
      nodes.push_back(n);
    };
    auto comp = [&](uint64_t us) {
      auto n = MakeNode(id++, ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(r == slow ? slow_us : us);
      add(n, "comp");
    };
    auto msg = [&](bool send, uint64_t tag) {
      auto n = MakeNode(id++, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      SetAttr(&n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(peer));
      SetAttr(&n, "comm_size", uint64_t{1} << 20);
      SetAttr(&n, "comm_tag", tag);
      add(n, send ? "send" : "recv");
    };
    for (uint64_t mb = 0; mb < 2; ++mb) {
      if (first) comp(10), msg(true, 10 + mb);
      if (!first) msg(false, 10 + mb), comp(12);
    }
    for (uint64_t mb = 0; mb < 2; ++mb) {
      if (first) msg(false, 20 + mb), comp(20);
      if (!first) comp(24), msg(true, 20 + mb);
    }
    if (all_reduce) {
      auto n = CollNode(id++, 0, 8 << 20);
      SetAttr(&n, "pg_name", std::string(first ? "dp0" : "dp1"));
      add(n, "grad_ar");
    }
    return nodes;
  });
}

RunConfig TraceConfig(const TempDir& d, bool groups) {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  if (groups) c.files.comm_groups = d.File("groups.json");
  return c;
}

// The 8-NPU traces: each shown rank keeps its own node ids, names and peers,
// and the messages between shown ranks are drawn as flows.
TEST(ClassObservers, EightNpuTracesEqualFullEngine) {
  TempDir d;
  WritePipelineTraces(d, true);
  ExpectSameObservers(TraceConfig(d, true), 2, "0,2,4,6");
}

// A straggler (rank 1) splits its class and its peer's: four classes, and the
// critical path runs through the straggler's messages.
TEST(ClassObservers, StragglerEqualsFullEngine) {
  TempDir d;
  WritePipelineTraces(d, false, /*slow=*/1, /*slow_us=*/15);
  ExpectSameObservers(TraceConfig(d, false), 4, "0,1,4,5");
}

// Point-to-point messages inside one class (a ring of sends on Ring(8)): the
// mirrored messages are drawn as flows between shown neighbours, and the
// critical path crosses to the rank's own left neighbour.
TEST(ClassObservers, MessagesInsideAClassEqualFullEngine) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, 50, 700));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1000));
  testing::WriteTraces(d, 8, [](int r) {
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
  ExpectSameObservers(TraceConfig(d, false), 1, "2-4,7");
}

// Where the observers cannot ride on the classes, the full engine runs and
// the note says why: a flat ring spanning two classes (the critical path
// would cross to a member that joined its collective last), and a timeline
// of more than half the ranks.
TEST(ClassObservers, FallBackToTheFullEngineWithTheReason) {
  TempDir d;
  RunConfig c = Generated(d,
                          "--model=llama3-8b --tp=2 --cp=2 --dp=4 --pp=2 --microbatches=2 --recompute=full "
                          "--order=tp-cp-ep-dp-pp --zero=3",
                          "Switch(4,300GB/s,1us)_Switch(8,25GB/s,2us)");
  c.observe.critical_path = true;
  auto path = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(path.ok()) << path.status().message();
  EXPECT_EQ(path->rank_classes, 0);
  EXPECT_NE(path->symmetry_note.find("; rank classes: --critical-path: rank 0's collective"), std::string::npos)
      << path->symmetry_note;
  EXPECT_NE(path->symmetry_note.find("runs on a communicator group that spans rank classes"), std::string::npos)
      << path->symmetry_note;
  EXPECT_GE(path->critical_path.rank, 0);

  TempDir t;
  WritePipelineTraces(t, true);
  RunConfig all = TraceConfig(t, true);
  all.observe.timeline_path = t.File("all.json");  // every rank: 6 of 8 are not representatives
  auto drawn = RunSimulation(all, DefaultBackends());
  ASSERT_TRUE(drawn.ok()) << drawn.status().message();
  EXPECT_EQ(drawn->rank_classes, 0);
  EXPECT_NE(drawn->symmetry_note.find("; rank classes: --timeline draws 6 ranks that are not representatives"),
            std::string::npos)
      << drawn->symmetry_note;
  EXPECT_NE(FormatReportText(drawn.value()).find("--timeline draws 6 ranks"), std::string::npos);
}

}  // namespace
}  // namespace orrery
