// Diagnosing traces like a compiler: `orrery trace check` lists every problem,
// `trace inspect` splits compute and lists process groups, JSON given as a trace
// is named for what it is, `trace to-json` writes to stdout, a 1-NPU run works.
#include <gtest/gtest.h>

#include "extern/et_io.h"
#include "extern/trace_sniff.h"
#include "run/run.h"
#include "tests/test_util.h"
#include "workload/trace_tools.h"

namespace orrery {
namespace {

using testing::TempDir;

ChakraProtoMsg::Node Comp(uint64_t id, uint64_t us, bool cpu, std::vector<uint64_t> data = {}) {
  auto n = testing::MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(us);
  testing::SetAttr(&n, "is_cpu_op", uint64_t{cpu ? 1u : 0u});
  for (uint64_t d : data) n.add_data_deps(d);
  return n;
}

// Rank 0: a negative comm_size, a dangling data edge and a control self edge; rank 1: a bad node type.
void WriteBadTraces(const TempDir& d) {
  testing::WriteTraces(d, 2, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes{Comp(1, 1, false)};
    if (r == 0) {
      auto c = testing::MakeNode(2, ChakraProtoMsg::COMM_COLL_NODE);
      testing::SetAttr(&c, "comm_type", uint64_t{0});
      auto* a = c.add_attr();
      a->set_name("comm_size");
      a->set_int64_val(-1);
      nodes.push_back(c);
      nodes.push_back(Comp(3, 1, false, {77}));
      nodes.push_back(Comp(4, 1, true));
      nodes.back().add_ctrl_deps(4);
    } else {
      auto n = testing::MakeNode(2, ChakraProtoMsg::COMP_NODE);
      n.set_type(static_cast<ChakraProtoMsg::NodeType>(12));
      nodes.push_back(n);
    }
    return nodes;
  });
}

TEST(TraceCheck, ListsEveryProblemWithFileNodeRankAndField) {
  TempDir d;
  WriteBadTraces(d);
  auto c = CheckTraces(d.File("trace"), 100, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string t0 = d.File("trace.0.et"), t1 = d.File("trace.1.et");
  EXPECT_EQ(c->problems, 4u);
  EXPECT_EQ(c->text,
            t0 + ": node 2 (rank 0): comm_size = -1: negative; allowed: an integer >= 0 and <= 281474976710656\n" + t0 +
                ": node 3 (rank 0) depends on node 77, which is not in the trace (a data_deps edge)\n" + t0 +
                ": node 4 (rank 0) depends on itself (a ctrl_deps edge; --ctrl-deps=repair drops control edges "
                "that point at their own node)\n" +
                t1 +
                ": node 2 (rank 1): node type 12 is not a Chakra NodeType; valid: 0..7 (INVALID_NODE .. "
                "COMM_COLL_NODE)\n" +
                d.File("trace") + ": 4 problem(s) in 2 of 2 rank file(s)\n");
  // A limit keeps the first messages and still counts them all; a rank file names the prefix too.
  auto limited = CheckTraces(t1, 1, TraceReadOptions{true, false});
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->problems, 3u);  // the control self edge is dropped under repair
  EXPECT_NE(limited->text.find(d.File("trace") +
                               ": 3 problem(s) in 2 of 2 rank file(s); the first 1 are listed (--limit=N lists more)"),
            std::string::npos)
      << limited->text;
}

TEST(TraceCheck, CleanTracesSayWhatWasRead) {
  TempDir d;
  testing::WriteTraces(d, 3, [](int) { return std::vector<ChakraProtoMsg::Node>{Comp(1, 1, false)}; });
  std::string out, err;
  EXPECT_EQ(testing::RunCliCapture("trace check " + d.File("trace"), &out, &err), 0) << err;
  EXPECT_EQ(out, d.File("trace") + ": 3 rank file(s), 3 node(s), no process groups: no problems found\n");
  WriteBadTraces(d);
  EXPECT_EQ(testing::RunCliCapture("trace check " + d.File("trace") + " --limit=2", &out, &err), 2);
  EXPECT_NE(out.find("; the first 2 are listed"), std::string::npos) << out;
  EXPECT_EQ(testing::RunCliCapture("trace check " + d.File("none"), &out, &err), 2);
  EXPECT_NE(err.find(d.File("none") + ".0.et: trace file does not exist; trace check reads PREFIX.0.et"),
            std::string::npos)
      << err;
}

TEST(TraceInspect, SplitsGpuAndCpuComputeAndListsProcessGroups) {
  TempDir d;
  testing::WriteTraces(d, 1, [](int) {
    ChakraProtoMsg::Node pg = testing::MakeNode(0, ChakraProtoMsg::METADATA_NODE);
    pg.set_name("## process_group:init ##");
    pg.mutable_inputs()->set_values(
        R"(['[{"pg_name": "0", "ranks": [], "group_size": 2}, {"pg_name": "5", "ranks": [0, 1]}]'])");
    auto roof = Comp(3, 4, false);
    testing::SetAttr(&roof, "num_ops", uint64_t{10});
    return std::vector<ChakraProtoMsg::Node>{pg, Comp(1, 5, false), Comp(2, 7, true), roof};
  });
  auto r = InspectTrace(d.File("trace.0.et"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->find("compute (replay): 16 us\n  GPU: 2 node(s), 9 us (1 with num_ops, for the roofline)\n  CPU: 1 "
                    "node(s), 7 us\n"),
            std::string::npos)
      << r.value();
  EXPECT_NE(r->find("process groups (" + d.File("trace.0.et") +
                    " node 0):\n  \"0\": every rank (group_size 2)\n  \"5\": [0, 1]\n"),
            std::string::npos)
      << r.value();
}

TEST(TraceToJson, WritesToStdoutWithoutOut) {
  TempDir d;
  testing::WriteTraces(d, 1, [](int) { return std::vector<ChakraProtoMsg::Node>{Comp(1, 5, false)}; });
  std::string out, err;
  ASSERT_EQ(testing::RunCliCapture("trace to-json " + d.File("trace.0.et"), &out, &err), 0) << err;
  EXPECT_EQ(out,
            "{}\n{\"id\":\"1\",\"type\":\"COMP_NODE\",\"duration_micros\":\"5\",\"attr\":[{\"name\":\"is_cpu_op\","
            "\"uint64_val\":\"0\"}]}\n");
}

// Text given as a trace is named for what it is, with how to convert it; gave "truncated trace ... at byte 8192".
TEST(NotATrace, JsonFilesAreRecognised) {
  TempDir d;
  auto open = [&](const std::string& text) {
    d.Write("x.0.et", text);
    EtReader r;
    const Status st = r.Open(d.File("x.0.et"));
    return st.ok() ? std::string("(opened)") : st.message();
  };
  const std::string x = d.File("x.0.et");
  EXPECT_EQ(open(R"({"schema": "1.0.1", "pid": 7, "nodes": [{"id": 1, "ctrl_deps": 0}]})"),
            x +
                ": a PyTorch host execution trace (JSON, schema 1.0.1), not a Chakra trace (.et files are binary "
                "protobuf records); link it with its Kineto device trace for the GPU kernels (chakra_trace_link "
                "--rank R --chakra-host-trace " +
                x +
                " --chakra-device-trace KINETO.json --output-file LINKED.json), then convert it: chakra_converter "
                "PyTorch --input LINKED.json --output PREFIX.<rank>.et (or convert it alone, host operators only: "
                "chakra_converter PyTorch --input " +
                x + " --output PREFIX.<rank>.et; the converter needs schema 1.0.2-chakra.0.0.4 or later)");
  EXPECT_EQ(open(R"({"schema": "1.0.2-chakra.0.0.4", "nodes": [{"id": 1, "exclusive_dur": 3}]})"),
            x +
                ": a linked PyTorch host + device trace (JSON, schema 1.0.2-chakra.0.0.4, as chakra_trace_link writes "
                "it), not a Chakra trace (.et files are binary protobuf records); convert it: chakra_converter "
                "PyTorch --input " +
                x + " --output PREFIX.<rank>.et");
  EXPECT_NE(open("  {\"schemaVersion\": 1, \"traceEvents\": []}")
                .find(x + ": a Kineto (PyTorch profiler) device trace (JSON with \"traceEvents\")"),
            std::string::npos);
  EXPECT_NE(open("{\"attr\":[]}\n{\"id\":\"1\",\"type\":\"COMP_NODE\",\"data_deps\":[\"0\"]}\n")
                .find(x + ": a Chakra trace as JSON (orrery trace to-json, or chakra_jsonizer)"),
            std::string::npos);
  EXPECT_NE(open("[1, 2]").find(x + ": a JSON file, not a Chakra trace"), std::string::npos);
  EXPECT_NE(open(std::string("\x1f\x8b\x08\0\0\0", 6)).find(x + ": gzip-compressed data, not a Chakra trace"),
            std::string::npos);
}

// A real trace whose GlobalMetadata is 123 bytes starts with '{' (the varint 123): binary bytes follow, so it reads.
TEST(NotATrace, ABinaryTraceStartingWithABraceStillReads) {
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version(std::string(121, 'v'));  // 1 tag + 1 length + 121 = 123 bytes
  ASSERT_EQ(md.ByteSizeLong(), 123u);
  TempDir d;
  EtWriter w;
  ASSERT_TRUE(w.Open(d.File("t.0.et"), md).ok());
  ASSERT_TRUE(w.Write(Comp(1, 1, false)).ok());
  ASSERT_TRUE(w.Close().ok());
  EXPECT_EQ(testing::ReadFileText(d.File("t.0.et"))[0], '{');
  EtReader r;
  EXPECT_TRUE(r.Open(d.File("t.0.et")).ok());
  EXPECT_FALSE(DescribeNotATrace(testing::ReadFileText(d.File("t.0.et")), "t").has_value());
}

// One NPU: a network of a single dimension of 1 runs a one-rank trace (collectives over one rank take no time).
TEST(OneNpu, ASingleRankTraceRuns) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 1, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  testing::WriteTraces(d, 1, [](int) {
    auto ar = testing::CollNode(2, 0, 1 << 20);
    ar.add_data_deps(1);
    return std::vector<ChakraProtoMsg::Node>{Comp(1, 5, false), ar, Comp(3, 2, true, {2})};
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->per_npu.size(), 1u);
  EXPECT_EQ(r->per_npu[0].finished_ns, 7000u);
  // Two dimensions, one of them of 1 NPU: drop it (the message said so at 1 NPU too, where it was impossible).
  d.Write("network.yml", "topology: [ Ring, Ring ]\nnpus_count: [ 1, 2 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 5, 5 ]\n");
  auto two = testing::RunIn(d);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().message(),
            d.File("network.yml") +
                ":2: npus_count[0] = 1: a dimension needs at least 2 NPUs (drop a dimension of 1; "
                "a network of one NPU is a single dimension of 1); allowed: an integer >= 2 and "
                "<= 67108864");
}

}  // namespace
}  // namespace orrery
