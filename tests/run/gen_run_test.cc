// `orrery run --generate`: the generator as an in-memory graph source. The
// same strategy simulated from written Chakra files and from memory gives
// byte-identical reports; bad combinations and strategies that do not fit the
// network are errors naming the flag and the numbers.
#include <gtest/gtest.h>

#include "gen/gen_source.h"
#include "gen/model.h"
#include "gen/strategy.h"
#include "tests/test_util.h"
#include "workload/graph_source.h"

namespace orrery::gen {
namespace {

using orrery::testing::RunCli;
using orrery::testing::TempDir;

const char kGpt64[] = "--model=gpt3-175b --tp=8 --pp=4 --dp=2 --microbatches=4 --sp --recompute=selective --zero=1";
const char kNetwork64[] = "Ring(8,300GB/s,500ns)_Switch(8,50GB/s,2us)";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "preferred-dataset-splits": 4})";

RunConfig BaseConfig(const TempDir& d) {
  d.Write("system.json", kSystem);
  RunConfig c;
  c.files.system = d.File("system.json");
  c.files.network = kNetwork64;
  return c;
}

// A 64-NPU GPT-3 iteration (TP 8 x PP 4 x DP 2, 1F1B, SP, ZeRO-1): written as
// Chakra files and read back by the strict trace reader, or built in memory;
// every field of the report agrees.
TEST(GenerateRun, FilesAndMemoryGiveIdenticalReports) {
  TempDir d;
  auto model = LoadModel("gpt3-175b");
  ASSERT_TRUE(model.ok());
  auto source = GeneratedSource(kGpt64);
  ASSERT_TRUE(source.ok()) << source.status().message();

  // From files: what `orrery gen --out` writes.
  Strategy s;
  s.tp = 8, s.pp = 4, s.dp = 2, s.microbatches = 4, s.sp = true, s.recompute = Recompute::kSelective, s.zero = 1;
  auto w = GenerateDense(model.value(), s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(WriteChakra(w.value(), d.File("gpt")).ok());
  RunConfig files = BaseConfig(d);
  files.files.workload_prefix = d.File("gpt");
  files.files.comm_groups = d.File("gpt.comm_groups.json");
  auto from_files = RunSimulation(files, DefaultBackends());
  ASSERT_TRUE(from_files.ok()) << from_files.status().message();

  RunConfig memory = BaseConfig(d);
  memory.source = source.value();
  auto from_memory = RunSimulation(memory, DefaultBackends());
  ASSERT_TRUE(from_memory.ok()) << from_memory.status().message();

  EXPECT_EQ(from_memory->npus, 64);
  EXPECT_GT(orrery::testing::MaxFinished(from_memory.value()), 0u);
  // Both take the rank-class path: the generator declares its four stages, the
  // files are compared graph by graph and give the same four classes.
  EXPECT_EQ(from_memory->rank_classes, 4) << from_memory->symmetry_note;
  EXPECT_EQ(from_files->rank_classes, 4) << from_files->symmetry_note;
  // The configurations differ (trace files, generator arguments); the simulation does not.
  // Only the generator knows its FLOPs, tokens and memory: the run from files has no "generated" section.
  EXPECT_TRUE(from_memory->generated.present);
  EXPECT_FALSE(from_files->generated.present);
  RunReport b = orrery::testing::WithoutConfig(from_memory.value());
  b.generated = GeneratedReport{};
  const RunReport a = orrery::testing::WithoutConfig(from_files.value());
  EXPECT_EQ(FormatReportJson(a), FormatReportJson(b));
  EXPECT_EQ(FormatReportText(a), FormatReportText(b));
  // Not a vacuous equality: the pipeline's stages differ, so ranks finish at
  // different times and every rank communicated.
  for (const NpuReport& r : from_memory->per_npu) EXPECT_GT(r.comm_ns, 0u) << "rank " << r.rank;
}

TEST(GenerateRun, SourceBuildsOneGraphPerRankWithTheLayoutsGroups) {
  auto source = GeneratedSource("--model=gpt3-175b --tp=2 --pp=2 --dp=2 --microbatches=2 --allow-over-capacity");
  ASSERT_TRUE(source.ok()) << source.status().message();
  const GraphSource& src = *source.value();
  uint64_t rank0 = 0, total = 0;
  ASSERT_TRUE(src.Check(8, "net", &rank0, &total).ok());
  EXPECT_GT(rank0, 0u);
  EXPECT_GE(total, 8 * (rank0 / 2));
  // Groups: tp {0,1} {2,3} ..., dp, pp: 4 + 4 + 4 groups of 2 ranks.
  const auto groups = src.CommGroups();
  EXPECT_EQ(groups.size(), 12u);
  for (const auto& [name, ranks] : groups) EXPECT_EQ(ranks.size(), 2u) << name;
  // Ranks of the same stage share a class; stage 0 and stage 1 do not
  // (rank = tp + 2 dp + 4 pp with the default order).
  EXPECT_TRUE(src.SameInputAsRank0(1));
  EXPECT_TRUE(src.SameInputAsRank0(3));
  EXPECT_FALSE(src.SameInputAsRank0(4));
}

TEST(GenerateRun, StrategyThatDoesNotMatchTheNetworkIsAnError) {
  auto source = GeneratedSource(
      "--model=gpt3-175b --tp=8 --pp=4 --dp=4 --microbatches=4 --zero=1 --sp --recompute=selective");
  ASSERT_TRUE(source.ok());
  TempDir d;
  RunConfig c = BaseConfig(d);
  c.source = source.value();
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().exit_code(), 2);
  EXPECT_NE(r.status().message().find("places 128 ranks"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("has 64 NPUs"), std::string::npos) << r.status().message();
}

TEST(GenerateRun, BadGeneratorFlagsNameTheFlagInsideGenerate) {
  auto empty = GeneratedSource("   ");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("--generate=\"   \": empty"), std::string::npos) << empty.status().message();

  auto out = GeneratedSource("--model=gpt3-175b --out=/tmp/x");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("--out is an output of 'orrery gen'"), std::string::npos)
      << out.status().message();

  auto typo = GeneratedSource("--model=gpt3-175b --tpp=8");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("--generate=\"--model=gpt3-175b --tpp=8\": gen: unknown flag --tpp"),
            std::string::npos)
      << typo.status().message();

  auto heads = GeneratedSource("--model=gpt3-175b --tp=7 --dp=1");
  ASSERT_FALSE(heads.ok());
  EXPECT_EQ(heads.status().exit_code(), 2);
  EXPECT_NE(heads.status().message().find("--generate="), std::string::npos) << heads.status().message();
}

TEST(GenerateRun, CommandLineRefusesGenerateWithTraceFlags) {
  std::string err;
  EXPECT_EQ(RunCli("run --generate=\"--model=gpt3-175b --tp=8 --pp=8\" --workload-configuration=x "
                   "--system-configuration=s.json --network-configuration=n.yml",
                   &err),
            2);
  EXPECT_NE(err.find("cannot be combined with --workload-configuration"), std::string::npos) << err;
  EXPECT_EQ(RunCli("run --example=default --generate=\"--model=gpt3-175b\"", &err), 2);
  EXPECT_NE(err.find("cannot be combined with --generate"), std::string::npos) << err;
}

// The command line reaches the same simulation as the library call.
TEST(GenerateRun, CommandLineSimulatesAGeneratedWorkload) {
  TempDir d;
  const char gen[] =
      "--model=megatron-22b --tp=2 --pp=2 --dp=2 --microbatches=2 --schedule=gpipe --allow-over-capacity";
  const char net[] = "Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)";
  RunConfig c = BaseConfig(d);
  c.files.network = net;
  auto source = GeneratedSource(gen);
  ASSERT_TRUE(source.ok()) << source.status().message();
  c.source = source.value();
  c.observe.all_collectives = true;  // what run --report-format=json asks for
  auto expected = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::string out, err;
  const int rc = orrery::testing::RunCliCapture(std::string("run --generate=\"") + gen +
                                                    "\" --system-configuration=" + d.File("system.json") +
                                                    " --network-configuration=\"" + net + "\" --report-format=json",
                                                &out, &err);
  EXPECT_EQ(rc, 0) << err;
  EXPECT_EQ(out, FormatReportJson(expected.value()));
}

}  // namespace
}  // namespace orrery::gen
