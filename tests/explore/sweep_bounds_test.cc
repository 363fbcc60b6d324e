// A sweep spec's sizes and values: points counted before they are made,
// kept points and each process's plan capped, YAML aliases bounded, every
// value through core/parse.h, rows read back checked, and the values a
// network file allows (latency 0, endpoint-delay) accepted on an axis.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "explore/sweep.h"
#include "explore/sweep_filter.h"
#include "extern/yaml_map.h"
#include "gen/gen_source.h"
#include "tests/test_util.h"

namespace orrery::sweep {
namespace {

using orrery::testing::ReadFileText;
using orrery::testing::TempDir;

const char kModel[] = "name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2})";
const char kNetwork[] = "Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)";
const char kGenerate[] = " --tp=4 --dp=2 --microbatches=2";

void WriteBase(const TempDir& d, const std::string& rest) {
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml", std::string("base:\n  network: \"") + kNetwork +
                           "\"\n  system: sys.json\n  generate: \"--model=" + d.File("model.yml") + kGenerate + "\"\n" +
                           rest);
}

std::string List(int n, int first = 1) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(first + i);
  return s + "]";
}

Result<Summary> Sweep(const TempDir& d, const std::string& out, Options o = {}) {
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  if (!spec.ok()) return spec.status();
  o.out_dir = d.File(out);
  std::string dry;
  return RunSweep(spec.value(), o, &dry);
}

std::string Message(const Status& st) { return st.ok() ? "(ok)" : st.message(); }

TEST(SweepBounds, PointsAreCountedBeforeAnyIsMade) {
  TempDir d;
  WriteBase(d, "axes:\n  network.dim0.bandwidth_gbps: " + List(3000) +
                   "\n  network.dim1.bandwidth_gbps: " + List(3000) + "\n  network.dim0.latency_ns: [1, 2, 3]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            d.File("sweep.yml") +
                ": points = network.dim0.bandwidth_gbps·network.dim1.bandwidth_gbps·network.dim0.latency_ns = "
                "3000·3000·3 = 27000000: above 10000000 from network.dim0.latency_ns on; allowed: at most 10000000 "
                "points enumerated by one spec: split the sweep into several specs, or shorten an axis");
}

TEST(SweepBounds, KeptPointsAndTheirValuesAreCapped) {
  TempDir d;
  WriteBase(d, "axes:\n  network.dim0.bandwidth_gbps: [1, 2, 3]\n  gen.zero: [0, 1]\n  run.iterations: [1, 2]\n");
  SweepLimits few;
  few.points = 5;
  auto spec = ReadSweepSpec(d.File("sweep.yml"), few);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            d.File("sweep.yml") +
                ": more than 5 points kept (12 enumerated, no filters); allowed: at most 5 points in one spec and "
                "10000000 values (3 per point here): split the sweep into several specs, or filter more");
  SweepLimits values;
  values.values = 10;  // 3 paths a point: 3 points
  spec = ReadSweepSpec(d.File("sweep.yml"), values);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find(": more than 3 points kept (12 enumerated"), std::string::npos)
      << spec.status().message();
  // With a filter the count is known only as points are made: refused at the first one past the cap.
  WriteBase(d,
            "axes:\n  network.dim0.bandwidth_gbps: [1, 2, 3]\n  gen.zero: [0, 1]\n  run.iterations: [1, 2]\n"
            "filters: [\"iterations == 1\"]\n");
  SweepLimits two;
  two.points = 2;
  spec = ReadSweepSpec(d.File("sweep.yml"), two);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            d.File("sweep.yml") +
                ": more than 2 points kept (reached at point 4 of the enumeration); allowed: at most 2 points in one "
                "spec and 10000000 values (3 per point here): split the sweep into several specs, or filter more");
  // Filtered points are never stored: a filter keeping 4 of the 12 passes the cap of 5.
  WriteBase(d,
            "axes:\n  network.dim0.bandwidth_gbps: [1, 2, 3]\n  gen.zero: [0, 1]\n  run.iterations: [1, 2]\n"
            "filters: [\"dim0.bandwidth_gbps <= 2 and iterations == 1\"]\n");
  spec = ReadSweepSpec(d.File("sweep.yml"), few);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->points.size(), 4u);
  EXPECT_EQ(spec->enumerated, 12u);
  EXPECT_EQ(spec->indices, (std::vector<uint64_t>{0, 2, 4, 6}));
}

TEST(SweepBounds, ListedPointsAreCountedBeforeTheyAreRead) {
  TempDir d;
  WriteBase(d, "points:\n  - {gen.zero: 0}\n  - {gen.zero: 1}\n  - {gen.zero: 0}\n");
  SweepLimits two;
  two.points = 2;
  auto spec = ReadSweepSpec(d.File("sweep.yml"), two);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), d.File("sweep.yml") +
                                         ":6: points: 3 points; allowed: at most 2 points in one spec: split the "
                                         "sweep into several specs");
}

TEST(SweepBounds, EachProcessPlansABoundedNumberOfPoints) {
  TempDir d;
  WriteBase(d, "axes:\n  network.dim0.bandwidth_gbps: [1, 2, 3]\n  gen.zero: [0, 1]\n  run.iterations: [1, 2]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  Options o;
  o.max_plan_points = 5;
  auto plan = MakePlan(spec.value(), o);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(), d.File("sweep.yml") +
                                         ": 12 points to plan in this process (12 in 1 shard(s)); allowed: at most 5 "
                                         "per process: run it as --shard=I/N with N >= 3");
  o.shard_count = 3;  // 4 each
  EXPECT_TRUE(MakePlan(spec.value(), o).ok());
}

TEST(SweepBounds, AliasAmplificationIsRefused) {
  TempDir d;
  // "Billion laughs": ten lines that stand for 10^9 points' worth of nodes.
  std::string laughs = "points:\n  - &p0 {gen.zero: 0}\n";
  std::string rest = "x0: &x0 [*p0, *p0, *p0, *p0, *p0, *p0, *p0, *p0, *p0, *p0]\n";
  for (int i = 1; i < 9; ++i) {
    std::string line = "x" + std::to_string(i) + ": &x" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) line += (k ? ", *x" : "*x") + std::to_string(i - 1);
    rest += line + "]\n";
  }
  WriteBase(d, laughs + rest);
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), d.File("sweep.yml") +
                                         ": more than 16777216 YAML nodes with its aliases expanded (an alias counts "
                                         "as a copy of what it names); allowed: at most 16777216 nodes");
  // Counted from the text in one pass, whatever it stands for.
  const std::string small = "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n";
  // 1 mapping + 2 keys + [1, 2, 3] (4 nodes) + three copies of it in a list (13).
  EXPECT_TRUE(CheckYamlNodes(small, "f.yml", 20).ok());
  EXPECT_EQ(Message(CheckYamlNodes(small, "f.yml", 19)),
            "f.yml: more than 19 YAML nodes with its aliases expanded (an alias counts as a copy of what it names); "
            "allowed: at most 19 nodes");
  // 1 + 2 keys + {k: 1} (3) + a list of two copies of it (7).
  EXPECT_TRUE(CheckYamlNodes("x: &m {k: 1}\ny: [*m, *m]\n", "f.yml", 13).ok());
  EXPECT_FALSE(CheckYamlNodes("x: &m {k: 1}\ny: [*m, *m]\n", "f.yml", 12).ok());
}

TEST(SweepBounds, SystemValuesGoThroughTheParser) {
  TempDir d;
  // std::stoll threw out_of_range (an abort) on this.
  WriteBase(d, "axes:\n  system.endpoint-delay: [99999999999999999999]\n");
  auto big = Sweep(d, "out");
  EXPECT_EQ(Message(big.status()), d.File("sys.json") + " (" + d.File("sweep.yml") +
                                       ": point 0): endpoint-delay = 1e+20: out of range; allowed: an integer >= 0 and "
                                       "<= 1000000000000");
  WriteBase(d, "axes:\n  system.endpoint-delay: [-5]\n");
  auto negative = Sweep(d, "out2");
  EXPECT_NE(Message(negative.status()).find("endpoint-delay = -5: negative; allowed: an integer >= 0"),
            std::string::npos)
      << Message(negative.status());
}

// The sweep's point equals `orrery run` on the same inputs: its finish time and hash are in the CSV.
void ExpectRowOfRun(const TempDir& d, const std::string& csv, const std::string& network, const std::string& system) {
  RunConfig c;
  c.files.network = network;
  d.Write("own.json", system);
  c.files.system = d.File("own.json");
  auto source = gen::GeneratedSource("--model=" + d.File("model.yml") + kGenerate);
  ASSERT_TRUE(source.ok());
  c.source = source.value();
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(csv.find("," + std::to_string(orrery::testing::MaxFinished(r.value())) + ","), std::string::npos) << csv;
  EXPECT_NE(csv.find("," + r->config_hash + ","), std::string::npos) << r->config_hash << "\n" << csv;
}

TEST(SweepBounds, EndpointDelayAxisIsAccepted) {
  TempDir d;
  // Every value was refused as negative: the value was stored as a signed JSON integer.
  WriteBase(d, "axes:\n  system.endpoint-delay: [10, 0, 2000]\n");
  auto sum = Sweep(d, "out");
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->failed, 0u);
  const std::string csv = ReadFileText(d.File("out/sweep.csv"));
  std::string with = kSystem;
  with.insert(with.size() - 1, ", \"endpoint-delay\": 2000");
  ExpectRowOfRun(d, csv, kNetwork, with);
}

TEST(SweepBounds, ZeroLatencyAxisIsAccepted) {
  TempDir d;
  WriteBase(d, "axes:\n  network.dim0.latency_ns: [0, 500]\n");
  auto sum = Sweep(d, "out");
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->failed, 0u);
  ExpectRowOfRun(d, ReadFileText(d.File("out/sweep.csv")), "Ring(4,100GB/s,0ns)_Switch(2,25GB/s,2us)", kSystem);
}

TEST(SweepBounds, NpuProductIsChecked) {
  TempDir d;
  WriteBase(d, "axes:\n  network.dim0.npus: [67108864]\n  network.dim1.npus: [67108864]\n");
  auto sum = Sweep(d, "out");
  EXPECT_EQ(Message(sum.status()), d.File("sweep.yml") +
                                       ": point 0: network.dim0.npus·network.dim1.npus = 67108864·67108864 = "
                                       "4503599627370496: above 67108864 from network.dim1.npus on; allowed: NPUs up "
                                       "to 67108864 (2^26)");
}

TEST(SweepBounds, RowNumbersAreChecked) {
  Row r;
  r.index = 3;
  r.status = "ok";
  const std::string good = RowJson(r);
  ASSERT_TRUE(ParseRowJson(good).ok());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return ParseRowJson(s);
  };
  EXPECT_EQ(Message(with("\"index\":3", "\"index\":1e300").status()),
            "not a sweep row: index = 1e+300: out of range; allowed: an integer >= 0 and <= 9999999");
  EXPECT_EQ(Message(with("\"index\":3", "\"index\":-1").status()),
            "not a sweep row: index = -1: negative; allowed: an integer >= 0 and <= 9999999");
  EXPECT_EQ(Message(with("\"idle_ns\":0", "\"idle_ns\":2.5").status()),
            "not a sweep row: idle_ns = 2.5: not an integer; allowed: an integer >= 0 and <= 18446744073709551615");
  EXPECT_EQ(Message(with("\"dim_busy_ns\":[]", "\"dim_busy_ns\":[1e30]").status()),
            "not a sweep row: dim_busy_ns[0] = 1e+30: out of range; allowed: an integer >= 0 and <= "
            "18446744073709551615");
  // Resumed and merged files go through it, with the file and line.
  TempDir d;
  WriteBase(d, "axes:\n  gen.zero: [0]\n");
  std::filesystem::create_directories(d.File("out"));
  d.Write("out/sweep.jsonl", good.substr(0, good.find("3")) + "1e300" + good.substr(good.find("3") + 1) + "\n");
  EXPECT_EQ(Message(Sweep(d, "out").status()), d.File("out/sweep.jsonl") +
                                                   ":1: not a sweep row: index = 1e+300: out of "
                                                   "range; allowed: an integer >= 0 and <= 9999999");
  std::filesystem::create_directories(d.File("shards"));
  d.Write("shards/sweep.shard-1-of-2.jsonl", "{\"index\":-7}\n");
  EXPECT_NE(Message(MergeShards(d.File("shards")).status())
                .find("sweep.shard-1-of-2.jsonl:1: not a sweep row: index = -7: negative"),
            std::string::npos);
}

// Found by the sweep_rows fuzz seeds: a value of the wrong type said "type
// must be number, but is string" without naming which; the key is named now.
TEST(SweepBounds, RowValuesOfTheWrongTypeNameTheirKey) {
  Row r;
  r.index = 3;
  r.status = "ok";
  r.point = {{"gen.tp", Value{"2", false}}};
  const std::string good = RowJson(r);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return ParseRowJson(s);
  };
  EXPECT_EQ(Message(with("\"mfu\":null", "\"mfu\":\"x\"").status()),
            "not a sweep row: mfu: [json.exception.type_error.302] type must be number, but is string");
  EXPECT_EQ(Message(with("\"hash\":\"\"", "\"hash\":3").status()),
            "not a sweep row: hash: [json.exception.type_error.302] type must be string, but is number");
  EXPECT_EQ(Message(with("\"gen.tp\":\"2\"", "\"gen.tp\":[2]").status()),
            "not a sweep row: point.gen.tp: [json.exception.type_error.302] type must be string, but is array");
  // A missing key is named by the reader's own words, once.
  EXPECT_EQ(Message(ParseRowJson(R"({"index": 1})").status()),
            "not a sweep row: [json.exception.out_of_range.403] key 'point' not found");
}

TEST(SweepBounds, FilterLiteralBeyondADoubleIsRefused) {
  const std::vector<std::vector<Assignment>> points = {{{"gen.zero", Value{"1", false}}}};
  auto kept = FilterPoints("s.yml", {{"gen.zero < 1e999", 4}}, points, {}, ValidPaths(1));
  EXPECT_EQ(Message(kept.status()),
            "s.yml:4: filters[0] 'gen.zero < 1e999' at column 12: the number 1e999 is beyond a double; allowed: a "
            "finite number within about 1.8e308");
  auto fine = FilterPoints("s.yml", {{"gen.zero < 1e300", 4}}, points, {}, ValidPaths(1));
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->size(), 1u);
}

}  // namespace
}  // namespace orrery::sweep
