// The timeline and the critical path on a run by rank classes
// (run/class_observers.h): every case runs with classes and with
// --symmetry=off, and the timeline files and the critical paths (text and
// JSON) must be byte-identical. Where the observers cannot ride on the
// classes, the full engine runs and the report's note says why.
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

// The 8-NPU traces: each shown rank keeps its own node ids, names and peers,
// and the messages between shown ranks are drawn as flows.
TEST(ClassObservers, EightNpuTracesEqualFullEngine) {
  TempDir d;
  testing::WritePipelineTraces(d, true);
  ExpectSameObservers(testing::PipelineTraceConfig(d, true), 2, "0,2,4,6");
}

// A straggler (rank 1) splits its class and its peer's: four classes, and the
// critical path runs through the straggler's messages.
TEST(ClassObservers, StragglerEqualsFullEngine) {
  TempDir d;
  testing::WritePipelineTraces(d, false, /*slow=*/1, /*slow_us=*/15);
  ExpectSameObservers(testing::PipelineTraceConfig(d, false), 4, "0,1,4,5");
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
  ExpectSameObservers(testing::PipelineTraceConfig(d, false), 1, "2-4,7");
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
  testing::WritePipelineTraces(t, true);
  RunConfig all = testing::PipelineTraceConfig(t, true);
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
