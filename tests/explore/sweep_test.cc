// `orrery sweep`: spec checking, points applied to the parsed base, one row
// per point (bad points too), byte-identical output for any --jobs, resume
// after a kill, shards that merge to the single run's table, and two
// different simulations on two threads equal to their serial results.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "explore/sweep.h"
#include "gen/gen_source.h"
#include "tests/test_util.h"

namespace orrery::sweep {
namespace {

using orrery::testing::TempDir;

using orrery::testing::ReadFileText;

// A 4-layer model small enough to simulate in milliseconds.
const char kModel[] = "name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2})";

void WriteBase(const TempDir& d, const std::string& axes) {
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\"\n  system: sys.json\n"
          "  generate: \"--model=" +
              d.File("model.yml") + " --tp=4 --dp=2 --microbatches=2\"\n" + axes);
}

const char kAxes[] =
    "axes:\n  network.dim1.bandwidth_gbps: [10, 25, 50]\n  system.reduce-scatter-implementation: [ring, direct]\n"
    "  gen.zero: [0, 1]\n";

Result<Summary> Sweep(const TempDir& d, const std::string& out, int jobs, int shard = 0, int shards = 1) {
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  if (!spec.ok()) return spec.status();
  Options o;
  o.jobs = jobs;
  o.out_dir = d.File(out);
  o.shard_index = shard;
  o.shard_count = shards;
  std::string dry;
  return RunSweep(spec.value(), o, &dry);
}

TEST(SweepSpec, ProductInCanonicalOrder) {
  TempDir d;
  WriteBase(d, kAxes);
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->points.size(), 3u * 2u * 2u);
  // First axis slowest: point 5 = bandwidth index 1, ring/direct index 0, zero index 1.
  EXPECT_EQ(spec->points[5][0].value.text, "25");
  EXPECT_EQ(spec->points[5][1].value.text, "ring");
  EXPECT_EQ(spec->points[5][2].value.text, "1");
  EXPECT_EQ(spec->axis_paths, (std::vector<std::string>{"network.dim1.bandwidth_gbps",
                                                        "system.reduce-scatter-implementation", "gen.zero"}));
}

TEST(SweepSpec, BadSpecsNameThePath) {
  struct Case {
    std::string axes, message;
  };
  const Case cases[] = {
      {"axes:\n  network.dim1.bandwith_gbps: [1]\n",
       "unknown path 'network.dim1.bandwith_gbps' (did you mean 'network.dim1.bandwidth_gbps'?)"},
      {"axes:\n  network.dim3.latency_ns: [1]\n", "unknown path 'network.dim3.latency_ns'"},
      {"axes:\n  network.dim0.latency_ns: [fast]\n", "network.dim0.latency_ns"},
      {"axes:\n  gen.tp: [two]\n", "gen.tp"},
      {"zip:\n  gen.tp: [1, 2]\n  gen.dp: [1]\n", "zip lists must have equal lengths"},
      {"axes:\n  gen.tp: [1]\npoints:\n  - {gen.tp: 2}\n", "either an explicit list of points or axes/zip"},
      {"axis:\n  gen.tp: [1]\n", "axis"},
      {"axes:\n  gen.tp: []\n", "non-empty list"},
  };
  for (const Case& c : cases) {
    TempDir d;
    WriteBase(d, c.axes);
    auto spec = ReadSweepSpec(d.File("sweep.yml"));
    ASSERT_FALSE(spec.ok()) << c.axes;
    EXPECT_EQ(spec.status().exit_code(), 2);
    EXPECT_NE(spec.status().message().find(c.message), std::string::npos) << spec.status().message();
    EXPECT_NE(spec.status().message().find("sweep.yml:"), std::string::npos) << spec.status().message();
  }
  // A value the system reader refuses ends the sweep before anything runs.
  TempDir d;
  WriteBase(d, "axes:\n  system.preferred-dataset-splits: [2, -1]\n");
  auto sum = Sweep(d, "out", 1);
  ASSERT_FALSE(sum.ok());
  EXPECT_NE(sum.status().message().find("point 1"), std::string::npos) << sum.status().message();
  EXPECT_FALSE(std::filesystem::exists(d.File("out/sweep.csv")));
}

// The base's run settings and generator flags are read with the spec, so a
// bad one ends the sweep before any point instead of failing every row.
TEST(SweepSpec, BadBaseSettingsEndTheSweepBeforeAnyPoint) {
  TempDir d;
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\"\n  system: sys.json\n"
          "  generate: \"--model=" +
              d.File("model.yml") +
              " --tp=4 --dp=2\"\n  symmetry: sometimes\n"
              "axes:\n  gen.zero: [0, 1]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().exit_code(), 2);
  EXPECT_NE(spec.status().message().find("sweep.yml:5: base.symmetry = sometimes: unknown symmetry mode; "
                                         "allowed: auto, off"),
            std::string::npos)
      << spec.status().message();

  WriteBase(d, "axes:\n  gen.zero: [0, 1]\n");
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\"\n  system: sys.json\n"
          "  generate: \"--model=" +
              d.File("model.yml") + " --tp=four\"\naxes:\n  gen.zero: [0, 1]\n");
  auto sum = Sweep(d, "out", 1);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().exit_code(), 2);
  EXPECT_NE(sum.status().message().find("sweep.yml: generate: --generate=\"--model=" + d.File("model.yml") +
                                        " --tp=four\": --tp = \"four\""),
            std::string::npos)
      << sum.status().message();
  EXPECT_FALSE(std::filesystem::exists(d.File("out/sweep.csv")));
}

// Each point is the base with its fields replaced: the sweep's row equals a
// run of the same inputs written out by hand.
TEST(Sweep, PointsEqualTheirOwnRuns) {
  TempDir d;
  WriteBase(d, "axes:\n  network.dim1.bandwidth_gbps: [10, 50]\n");
  auto sum = Sweep(d, "out", 2);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  const std::string csv = ReadFileText(d.File("out/sweep.csv"));
  for (const char* bw : {"10", "50"}) {
    RunConfig c;
    c.files.network = std::string("Ring(4,100GB/s,500ns)_Switch(2,") + bw + "GB/s,2us)";
    c.files.system = d.File("sys.json");
    auto source = gen::GeneratedSource("--model=" + d.File("model.yml") + " --tp=4 --dp=2 --microbatches=2");
    ASSERT_TRUE(source.ok());
    c.source = source.value();
    auto r = RunSimulation(c, DefaultBackends());
    ASSERT_TRUE(r.ok()) << r.status().message();
    const std::string finished = "," + std::to_string(orrery::testing::MaxFinished(r.value())) + ",";
    EXPECT_NE(csv.find(std::string(",") + bw + ","), std::string::npos);
    EXPECT_NE(csv.find(finished), std::string::npos) << "bandwidth " << bw << ": " << finished << "\n" << csv;
    // The row's hash is the point's SpecHash: the run's report names the same configuration.
    ASSERT_EQ(r->config_hash.size(), 16u);
    EXPECT_NE(csv.find("," + r->config_hash + ","), std::string::npos) << r->config_hash << "\n" << csv;
  }
}

TEST(Sweep, OutputIsByteIdenticalForAnyJobs) {
  TempDir d;
  WriteBase(d, kAxes);
  auto one = Sweep(d, "one", 1);
  ASSERT_TRUE(one.ok()) << one.status().message();
  auto four = Sweep(d, "four", 4);
  ASSERT_TRUE(four.ok()) << four.status().message();
  EXPECT_EQ(one->ran, 12u);
  EXPECT_EQ(ReadFileText(d.File("one/sweep.csv")), ReadFileText(d.File("four/sweep.csv")));
  EXPECT_EQ(ReadFileText(d.File("one/sweep.jsonl")), ReadFileText(d.File("four/sweep.jsonl")));
}

// Killed mid-sweep (two whole rows and half a third on disk), the same
// command resumes: the two are kept, the half row is redone, nothing is
// lost or duplicated.
TEST(Sweep, ResumesAfterAKill) {
  TempDir d;
  WriteBase(d, kAxes);
  auto full = Sweep(d, "full", 2);
  ASSERT_TRUE(full.ok()) << full.status().message();
  const std::string jsonl = ReadFileText(d.File("full/sweep.jsonl"));
  size_t cut = 0;
  for (int i = 0; i < 2; ++i) cut = jsonl.find('\n', cut) + 1;
  std::filesystem::create_directories(d.File("killed"));
  d.Write("killed/sweep.jsonl", jsonl.substr(0, cut) + jsonl.substr(cut, 25));  // a partial third row
  auto resumed = Sweep(d, "killed", 2);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->skipped, 2u);
  EXPECT_EQ(resumed->ran, 10u);
  EXPECT_EQ(ReadFileText(d.File("killed/sweep.csv")), ReadFileText(d.File("full/sweep.csv")));
  EXPECT_EQ(ReadFileText(d.File("killed/sweep.jsonl")), jsonl);
  // A second rerun has nothing to do.
  auto again = Sweep(d, "killed", 2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ran, 0u);
  EXPECT_EQ(again->skipped, 12u);
}

TEST(Sweep, ShardsMergeToTheSingleRunsTable) {
  TempDir d;
  WriteBase(d, kAxes);
  auto single = Sweep(d, "single", 2);
  ASSERT_TRUE(single.ok());
  for (int i = 0; i < 5; ++i) {
    auto s = Sweep(d, "sharded", 1, i, 5);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->in_shard, i < 2 ? 3u : 2u);  // 12 points: indices i, i+5, i+10
  }
  auto merged = MergeShards(d.File("sharded"));
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->points, 12u);
  EXPECT_EQ(ReadFileText(d.File("sharded/sweep.csv")), ReadFileText(d.File("single/sweep.csv")));
  // The same shard twice: refused.
  std::filesystem::copy_file(d.File("sharded/sweep.shard-1-of-5.jsonl"), d.File("sharded/sweep.shard-9-of-5.jsonl"));
  auto dup = MergeShards(d.File("sharded"));
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("refusing to merge duplicates"), std::string::npos) << dup.status().message();
}

// A point the generator refuses (tp 3 divides neither heads nor the NPUs) is
// a row with its message; the other points run.
// run.heterogeneity: a file per point, relative to the spec ("none": as configured); each
// row equals the run of its own file, and a file that does not read is that point's row.
TEST(Sweep, HeterogeneityFilesAreAnAxis) {
  TempDir d;
  d.Write("slow.yml", "compute:\n  - ranks: 3\n    speed: 0.5\n");
  d.Write("bad.yml", "compute:\n  - ranks: 8\n    speed: 0.5\n");
  WriteBase(d, "axes:\n  run.heterogeneity: [none, slow.yml, bad.yml]\n");
  auto sum = Sweep(d, "out", 2);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->failed, 1u);
  const std::string csv = ReadFileText(d.File("out/sweep.csv"));
  std::vector<Tick> finished;
  for (const std::string het : {"", "slow.yml"}) {
    RunConfig c;
    c.files.network = "Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)";
    c.files.system = d.File("sys.json");
    if (!het.empty()) c.files.heterogeneity = d.File(het);
    auto source = gen::GeneratedSource("--model=" + d.File("model.yml") + " --tp=4 --dp=2 --microbatches=2");
    ASSERT_TRUE(source.ok());
    c.source = source.value();
    auto r = RunSimulation(c, DefaultBackends());
    ASSERT_TRUE(r.ok()) << r.status().message();
    finished.push_back(orrery::testing::MaxFinished(r.value()));
    EXPECT_NE(csv.find("," + r->config_hash + ",ok," + std::to_string(finished.back()) + ","), std::string::npos)
        << het << "\n" << csv;
  }
  EXPECT_GT(finished[1], finished[0]);  // rank 3 at half speed holds up its TP group
  // In the base: every point runs with the file (an axis value replaces it; none removes it).
  WriteBase(d, "axes:\n  run.iterations: [1]\n");
  const std::string spec = ReadFileText(d.File("sweep.yml"));  // "base:\n  ..."
  d.Write("sweep.yml", "base:\n  heterogeneity: slow.yml\n" + spec.substr(std::string("base:\n").size()));
  auto based = Sweep(d, "out_base", 1);
  ASSERT_TRUE(based.ok()) << based.status().message();
  const std::string base_csv = ReadFileText(d.File("out_base/sweep.csv"));
  EXPECT_NE(base_csv.find(",ok," + std::to_string(finished[1]) + ","), std::string::npos) << base_csv;
  // (CSV doubles the message's quotes.)
  EXPECT_NE(csv.find("bad.yml:2: ranks = \"\"8\"\": out of range; allowed: an integer >= 0 and <= 7"),
            std::string::npos)
      << csv;
}

TEST(Sweep, BadPointsAreRows) {
  TempDir d;
  WriteBase(d, "axes:\n  gen.tp: [4, 3]\n");
  auto sum = Sweep(d, "out", 2);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->failed, 1u);
  const std::string csv = ReadFileText(d.File("out/sweep.csv"));
  EXPECT_NE(csv.find("\n0,4,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("--tp = 3 does not divide the 8 attention heads"), std::string::npos) << csv;
}

// Two different simulations at once in one process give their serial results.
TEST(Sweep, TwoSimulationsOnTwoThreadsEqualTheirSerialRuns) {
  TempDir d;
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  auto config = [&](const std::string& generate, const std::string& net) {
    RunConfig c;
    c.files.network = net;
    c.files.system = d.File("sys.json");
    c.source = gen::GeneratedSource("--model=" + d.File("model.yml") + " " + generate).value();
    c.observe.all_collectives = true;
    return c;
  };
  const RunConfig a = config("--tp=4 --dp=2 --microbatches=4", "Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)");
  const RunConfig b = config("--tp=2 --pp=2 --dp=2 --microbatches=4", "Switch(8,50GB/s,1us)");
  const std::string serial_a = FormatReportJson(RunSimulation(a, DefaultBackends()).value());
  const std::string serial_b = FormatReportJson(RunSimulation(b, DefaultBackends()).value());
  ASSERT_NE(serial_a, serial_b);
  std::string par_a, par_b;
  std::thread ta([&] { par_a = FormatReportJson(RunSimulation(a, DefaultBackends()).value()); });
  std::thread tb([&] { par_b = FormatReportJson(RunSimulation(b, DefaultBackends()).value()); });
  ta.join();
  tb.join();
  EXPECT_EQ(par_a, serial_a);
  EXPECT_EQ(par_b, serial_b);
}

// `orrery sweep --plugin`: points may name a plugin's network backend, which
// the built-in registry does not have.
TEST(Sweep, PointsUseAPluginsBackend) {
  TempDir d;
  d.Write("sys.json", R"({"all-reduce-implementation": ["ring"]})");
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,50GB/s,500ns)\"\n  system: sys.json\n  workload: dp\n"
          "  backend: fixture-fixed\naxes:\n  run.iterations: [1, 2]\n");
  std::string out, err;
  ASSERT_EQ(testing::RunCli("trace gen-dp --npus=4 --layers=2 --out=" + d.File("dp"), &err), 0) << err;
  ASSERT_EQ(testing::RunCliCapture("sweep " + d.File("sweep.yml") + " --quiet --jobs=2 --out=" + d.File("with") +
                                       " --plugin=" FIXTURE_GOOD_PATH,
                                   &out, &err),
            0)
      << err;
  const std::string with = ReadFileText(d.File("with/sweep.csv"));
  EXPECT_EQ(std::count(with.begin(), with.end(), '\n'), 3) << with;
  EXPECT_EQ(with.find("unknown network backend"), std::string::npos) << with;
  EXPECT_NE(with.find(",ok,"), std::string::npos) << with;
  // Without the plugin every point names the backend it lacks.
  ASSERT_EQ(testing::RunCliCapture("sweep " + d.File("sweep.yml") + " --quiet --jobs=1 --out=" + d.File("without"),
                                   &out, &err),
            0)
      << err;
  const std::string without = ReadFileText(d.File("without/sweep.csv"));
  EXPECT_NE(without.find("fixture-fixed"), std::string::npos) << without;
  EXPECT_EQ(without.find(",ok,"), std::string::npos) << without;
}

}  // namespace
}  // namespace orrery::sweep
