// What `orrery gen` and `orrery trace gen-*` write: every attribute in the field
// Chakra's own tools use (is_cpu_op a bool on every node, comm_size and
// comm_type int64, ...), from one writer; with --pg-metadata the process-group
// table as Chakra's converter writes it, so the traces run without the JSON.
#include <gtest/gtest.h>

#include "extern/et_io.h"
#include "extern/process_groups.h"
#include "report/report.h"
#include "run/run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::RunCli;
using testing::TempDir;
using A = ChakraProtoMsg::AttributeProto;

// Every node of a file.
std::vector<ChakraProtoMsg::Node> ReadAll(const std::string& path) {
  std::vector<ChakraProtoMsg::Node> out;
  EtReader r;
  if (!r.Open(path).ok()) return out;
  ChakraProtoMsg::Node n;
  for (Result<bool> more = r.Next(&n); more.ok() && more.value(); more = r.Next(&n)) out.push_back(n);
  return out;
}

// The field each attribute a generated trace holds is in, as Chakra's converter and generator write them.
A::ValueCase Expected(const std::string& name) {
  if (name == "is_cpu_op") return A::kBoolVal;
  if (name == "num_ops" || name == "comm_type" || name == "comm_size") return A::kInt64Val;
  if (name == "comm_src" || name == "comm_dst" || name == "comm_tag") return A::kInt32Val;
  if (name == "pg_name") return A::kStringVal;
  if (name == "compute_efficiency" || name == "memory_efficiency") return A::kDoubleVal;
  return A::kUint64Val;  // tensor_size (as Chakra writes it), Orrery's output_bytes and comm_stream
}

void ExpectChakraSpelling(const std::string& path) {
  const auto nodes = ReadAll(path);
  ASSERT_FALSE(nodes.empty()) << path;
  for (const auto& n : nodes) {
    if (n.type() == ChakraProtoMsg::METADATA_NODE) continue;
    ASSERT_GT(n.attr_size(), 0);
    EXPECT_EQ(n.attr(0).name(), "is_cpu_op") << path << " node " << n.id();
    EXPECT_FALSE(n.attr(0).bool_val()) << path << " node " << n.id();
    for (const auto& a : n.attr()) EXPECT_EQ(a.value_case(), Expected(a.name())) << path << " " << a.name();
  }
}

TEST(GenTraceWriter, EveryGeneratorSpellsAttributesAsChakra) {
  TempDir d;
  std::string err;
  ASSERT_EQ(RunCli("gen --model=mixtral-8x7b --tp=2 --ep=2 --pp=2 --dp=2 --microbatches=2 --zero=1 "
                   "--allow-over-capacity --out=" +
                       d.File("moe"),
                   &err),
            0)
      << err;
  ASSERT_EQ(RunCli("gen --model=dlrm-mlperf --npus=4 --allow-over-capacity --out=" + d.File("dlrm"), &err), 0) << err;
  ASSERT_EQ(RunCli("trace gen-dp --npus=2 --layers=2 --out=" + d.File("dp"), &err), 0) << err;
  ASSERT_EQ(RunCli("trace gen-coll --npus=2 --collective=ALL_GATHER --out=" + d.File("coll"), &err), 0) << err;
  for (const char* f : {"moe.0.et", "moe.5.et", "dlrm.0.et", "dp.1.et", "coll.0.et"}) ExpectChakraSpelling(d.File(f));
  // Sends and receives are there to check (pipeline stages).
  bool p2p = false;
  for (const auto& n : ReadAll(d.File("moe.0.et"))) p2p |= n.type() == ChakraProtoMsg::COMM_SEND_NODE;
  EXPECT_TRUE(p2p);
}

const char kNet[] = "Ring(2,300GB/s,500ns)_Ring(2,100GB/s,1us)_Switch(2,50GB/s,2us)";
const char kGen[] = "--model=megatron-22b --tp=2 --pp=2 --dp=2 --microbatches=2 --zero=1 --allow-over-capacity";

Result<RunReport> RunGen(const TempDir& d, const std::string& prefix, const std::string& groups) {
  RunConfig c;
  c.files.workload_prefix = d.File(prefix);
  c.files.network = kNet;
  c.files.system = d.File("system.json");
  c.files.comm_groups = groups;
  c.run.symmetry = SymmetryMode::kOff;
  return RunSimulation(c, DefaultBackends());
}

// With --pg-metadata the last node of every file is the table; the traces then
// run from their own groups exactly as with ASTRA-sim's comm-group JSON.
TEST(GenTraceWriter, PgMetadataLetsTheTracesRunWithoutTheGroupsFile) {
  TempDir d;
  d.Write("system.json", R"({"preferred-dataset-splits": 2})");
  std::string err;
  ASSERT_EQ(RunCli(std::string("gen ") + kGen + " --out=" + d.File("plain"), &err), 0) << err;
  ASSERT_EQ(RunCli(std::string("gen ") + kGen + " --pg-metadata --out=" + d.File("meta"), &err), 0) << err;
  const auto nodes = ReadAll(d.File("meta.3.et"));
  ASSERT_FALSE(nodes.empty());
  const ChakraProtoMsg::Node& last = nodes.back();
  EXPECT_EQ(last.type(), ChakraProtoMsg::METADATA_NODE);
  EXPECT_EQ(last.name(), "## process_group:init ##");
  EXPECT_EQ(last.id(), nodes.size() - 1);
  auto table = ParseProcessGroupTable(last.inputs().values(), "meta.3.et");
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->size(), 12u);  // TP, PP and DP groups of 2 over 8 ranks: 4 + 4 + 4
  EXPECT_EQ(ReadAll(d.File("plain.3.et")).size(), nodes.size() - 1);

  // Without the table, the JSON is needed: a pg_name with no group is an error, never all NPUs.
  auto bare = RunGen(d, "plain", "");
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("pg_name \"1\" names a process group, but none is defined"), std::string::npos)
      << bare.status().message();
  auto with_file = RunGen(d, "plain", d.File("plain.comm_groups.json"));
  auto from_trace = RunGen(d, "meta", "");
  ASSERT_TRUE(with_file.ok()) << with_file.status().message();
  ASSERT_TRUE(from_trace.ok()) << from_trace.status().message();
  for (int r = 0; r < 8; ++r) EXPECT_EQ(from_trace->per_npu[r].finished_ns, with_file->per_npu[r].finished_ns) << r;
  ASSERT_EQ(from_trace->notes.size(), 1u);
  EXPECT_EQ(from_trace->notes[0], "communicator groups: 12 from the traces' process-group metadata (" +
                                      d.File("meta.0.et") + " node " + std::to_string(last.id()) +
                                      ", the same in every rank's trace)");
  // The file and the traces agree: the report has nothing to say about the override.
  auto both = RunGen(d, "meta", d.File("meta.comm_groups.json"));
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_TRUE(both->notes.empty());
}

}  // namespace
}  // namespace orrery
