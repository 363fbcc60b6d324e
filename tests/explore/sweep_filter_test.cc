// Sweep filters (explore/sweep_filter.h): the expression language's values,
// operators and precedence, names resolved against the point and the base,
// filtered points neither run nor rows, shards over the kept points, and every
// bad filter an error naming the file, line, filter, column and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "explore/sweep.h"
#include "explore/sweep_filter.h"
#include "tests/test_util.h"

namespace orrery::sweep {
namespace {

using orrery::testing::TempDir;

using orrery::testing::ReadFileText;

const char kModel[] = "name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2, "all-reduce-implementation": ["ring", "ring"]})";

void WriteSpec(const TempDir& d, const std::string& rest) {
  d.Write("model.yml", kModel);
  d.Write("sys.json", kSystem);
  d.Write("sweep.yml",
          "base:\n  network: \"Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\"\n  system: sys.json\n"
          "  generate: \"--model=" +
              d.File("model.yml") + " --tp=4 --dp=2 --microbatches=2\"\n" + rest);
}

const char kAxes[] =
    "axes:\n  network.dim0.bandwidth_gbps: [10, 25, 50]\n  network.dim1.bandwidth_gbps: [10, 25, 50]\n"
    "  gen.zero: [0, 1]\n";

// One point {gen.zero = 1, system.x = 'ring'} over a base with tp = 4, dp = 2: does `filter` keep it?
Result<bool> Keeps(const std::string& filter) {
  const std::vector<std::vector<Assignment>> points = {
      {{"gen.zero", Value{"1", false}}, {"system.all-reduce-implementation", Value{"ring", false}}}};
  const std::map<std::string, Value> base = {{"gen.tp", Value{"4", false}},
                                             {"gen.dp", Value{"2", false}},
                                             {"gen.sp", Value{"true", false}},
                                             {"network.dim1.bandwidth_gbps", Value{"25", false}}};
  auto kept = FilterPoints("s.yml", {{filter, 3}}, points, base, ValidPaths(2));
  if (!kept.ok()) return kept.status();
  return kept->size() == 1;
}

TEST(SweepFilter, ValuesOperatorsAndPrecedence) {
  struct Case {
    const char* filter;
    bool keep;
  };
  const Case cases[] = {
      {"1 + 2 * 3 == 7", true},  // * before +
      {"(1 + 2) * 3 == 9", true},
      {"10 / 4 == 2.5", true},    // real division
      {"2 - 3 - 4 == -5", true},  // left to right
      {"-2 * -3 == 6", true},
      {"tp * dp == 8", true},  // the base's generate flags
      {"gen.tp * gen.dp <= 4", false},
      {"zero == 1 and tp >= 4", true},
      {"zero == 0 or tp < 4", false},
      {"not false and false", false},  // not binds tighter than and
      {"not (false and false)", true},
      {"true or false and false", true},  // and before or
      {"false || !false && true", true},
      {"all-reduce-implementation == 'ring'", true},
      {"system.all-reduce-implementation != \"direct\"", true},
      {"sp == true", true},  // a bare true in the base is a boolean
      {"dim1.bandwidth_gbps >= 25", true},
      {"true or 1 / 0 > 1", true},  // or stops at true
      {"false and 1 / 0 > 1", false},
      {"1e3 == 1000", true},
  };
  for (const Case& c : cases) {
    auto r = Keeps(c.filter);
    ASSERT_TRUE(r.ok()) << c.filter << ": " << r.status().message();
    EXPECT_EQ(r.value(), c.keep) << c.filter;
  }
}

TEST(SweepFilter, BadFiltersSayWhereAndWhat) {
  struct Case {
    const char* filter;
    std::vector<std::string> needles;
  };
  const Case cases[] = {
      {"tp * ",
       {"s.yml:3: filters[0] 'tp * ' at column 6: expected a number, a 'string', true, false, a name or '(', found the "
        "end"}},
      {"tpp <= 4",
       {"at column 1: unknown name 'tpp' (did you mean 'tp'?)",
        "the axes: gen.zero, system.all-reduce-implementation"}},
      {"dim1.bandwidth <= 4", {"unknown name 'dim1.bandwidth' (did you mean 'dim1.bandwidth_gbps'?)"}},
      {"bandwidth_gbps > 1",
       {"'bandwidth_gbps' names several paths (network.dim0.bandwidth_gbps, network.dim1.bandwidth_gbps)"}},
      {"zero == ring", {"at column 9: unknown name 'ring'", "a text value is quoted: 'ring'"}},
      {"tp-dp > 0", {"unknown name 'tp-dp'", "write subtraction with spaces"}},
      {"tp = 4", {"at column 4: unexpected character '='", "(compare with ==)"}},
      {"50GB < tp", {"at column 3: expected an operator after the number 50", "units are not allowed"}},
      {"tp < 8 < 9", {"at column 8: comparisons do not chain"}},
      {"(tp < 8", {"at column 8: expected ')', found the end"}},
      {"tp < 8)", {"at column 7: expected an operator", "found ')'"}},
      {"'ring == tp", {"at column 1: the string opened here has no closing '"}},
      {"tp * 2", {"gives a number, not true or false"}},
      {"zero == 'ring'",
       {"at point 0 (gen.zero=1, system.all-reduce-implementation=ring): '==' at column 6 compares a number with a "
        "string"}},
      {"tp / (zero - 1) > 1", {"'/' at column 4 divides by zero"}},
      {"all-reduce-implementation + 1 > 0", {"'+' at column 27 takes numbers, got a string"}},
      {"not tp", {"'not' at column 1 takes true or false, got a number"}},
      {"global-batch > 1",
       {"'global-batch' (gen.global-batch) has no value at point 0",
        "not on an axis there and the base does not set it"}},
      {"tp > 1 and", {"at column 11: expected a number"}},
      {"tp $ 1", {"at column 4: unexpected character '$'"}},
  };
  for (const Case& c : cases) {
    auto r = Keeps(c.filter);
    ASSERT_FALSE(r.ok()) << c.filter;
    EXPECT_EQ(r.status().exit_code(), 2);
    for (const std::string& n : c.needles) {
      EXPECT_NE(r.status().message().find(n), std::string::npos) << c.filter << "\n" << r.status().message();
    }
    EXPECT_NE(r.status().message().find("s.yml:3: filters[0] '" + std::string(c.filter) + "'"), std::string::npos)
        << r.status().message();
  }
}

// Hostile filters end in a message, not a stack overflow.
TEST(SweepFilter, DeepExpressionsAreRefused) {
  const std::string parens = std::string(20000, '(') + "tp";
  const std::string nots = [] {
    std::string s;
    for (int i = 0; i < 10000; ++i) s += "not ";
    return s + "true";
  }();
  std::string sum = "tp";
  for (int i = 0; i < 10000; ++i) sum += " + 1";
  sum += " > 0";
  const std::pair<std::string, std::string> cases[] = {
      {parens, "at column 201: more than 200 nested parentheses"},
      {nots, "at column 801: more than 200 nested operators"},
      {std::string(10000, '-') + "1 < 0", "at column 201: more than 200 nested operators"},
      {sum, "nests more than 200 levels"},
  };
  for (const auto& [filter, needle] : cases) {
    auto r = Keeps(filter);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message().substr(0, 300);
    EXPECT_LT(r.status().message().size(), 400u);  // the filter is shown by its start
    EXPECT_NE(r.status().message().find("...' (" + std::to_string(filter.size()) + " characters)"), std::string::npos);
  }
  // 150 levels are fine.
  std::string ok = std::string(150, '(') + "tp" + std::string(150, ')') + " == 4";
  auto r = Keeps(ok);
  ASSERT_TRUE(r.ok()) << r.status().message().substr(0, 300);
  EXPECT_TRUE(r.value());
}

// Axis values that only look like numbers stay text: hex, inf, nan.
TEST(SweepFilter, OnlyDecimalNumbersAreNumbers) {
  const std::vector<std::vector<Assignment>> points = {{{"system.x", Value{"0x10", false}}},
                                                       {{"system.x", Value{"inf", false}}},
                                                       {{"system.x", Value{"16", false}}},
                                                       {{"system.x", Value{"16", true}}}};  // quoted: text
  std::vector<std::string> valid = {"system.x"};
  auto text = FilterPoints("s.yml", {{"x == '0x10' or x == 'inf' or x == '16'", 1}}, {points[0], points[1], points[3]},
                           {}, valid);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->size(), 3u);
  auto number = FilterPoints("s.yml", {{"x == 16", 1}}, {points[2]}, {}, valid);
  ASSERT_TRUE(number.ok()) << number.status().message();
  EXPECT_EQ(number->size(), 1u);
}

TEST(SweepFilter, SpecErrorsNameTheFileAndLine) {
  TempDir d;
  WriteSpec(d, std::string(kAxes) + "filters:\n  - \"tp > 1\"\n  - \"dim2.npus > 1\"\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("sweep.yml:11: filters[1] 'dim2.npus > 1' at column 1: unknown name"),
            std::string::npos)
      << spec.status().message();
  WriteSpec(d, std::string(kAxes) + "filters: \"tp > 1\"\n");
  spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("sweep.yml:9: filters: expected a list of conditions"), std::string::npos)
      << spec.status().message();
}

// dim1 >= dim0 over {10, 25, 50}²: 6 of the 9 pairs (3 equal + 3 above), x 2
// ZeRO stages = 12 points; the other 6 are neither run nor rows, and --dry-run says so.
TEST(SweepFilter, FilteredPointsAreNotRunAndNotRows) {
  TempDir d;
  WriteSpec(d, std::string(kAxes) + "filters: [\"dim1.bandwidth_gbps >= dim0.bandwidth_gbps\"]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->enumerated, 18u);
  EXPECT_EQ(spec->filtered, 6u);
  // Enumeration index = (dim0 i, dim1 j, zero z) -> 6i + 2j + z; kept when j >= i.
  std::vector<uint64_t> expected;
  for (uint64_t i = 0; i < 3; ++i) {
    for (uint64_t j = i; j < 3; ++j) {
      for (uint64_t z = 0; z < 2; ++z) expected.push_back(6 * i + 2 * j + z);
    }
  }
  EXPECT_EQ(spec->indices, expected);
  Options o;
  o.dry_run = true;
  std::string dry;
  ASSERT_TRUE(RunSweep(spec.value(), o, &dry).ok());
  EXPECT_EQ(dry.substr(0, dry.find('\n')), "12 points (6 of 18 filtered out)");
  o.dry_run = false;
  o.jobs = 2;
  o.out_dir = d.File("out");
  auto sum = RunSweep(spec.value(), o, &dry);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->ran, 12u);
  const std::string csv = ReadFileText(d.File("out/sweep.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13);  // header + 12
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  for (uint64_t index : expected) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(line.substr(0, line.find(',')), std::to_string(index));
  }
}

// Names the generate line leaves out take the generator's defaults (pp 1, ZeRO 0, no SP).
TEST(SweepFilter, TheGeneratorsDefaultsAreBaseValues) {
  TempDir d;
  WriteSpec(d, std::string(kAxes) + "filters: [\"tp * dp * pp == 8 and cp == 1 and not sp and microbatches == 2\"]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->points.size(), 18u);
}

// Shards split the kept points (balanced), and merge to the single run's table.
TEST(SweepFilter, ShardsOfAFilteredSweepMerge) {
  TempDir d;
  WriteSpec(d, std::string(kAxes) + "filters: [\"dim1.bandwidth_gbps >= dim0.bandwidth_gbps and zero == 0\"]\n");
  auto spec = ReadSweepSpec(d.File("sweep.yml"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->points.size(), 6u);
  std::string dry;
  Options o;
  o.jobs = 2;
  o.out_dir = d.File("single");
  ASSERT_TRUE(RunSweep(spec.value(), o, &dry).ok());
  for (int i = 0; i < 3; ++i) {
    o.out_dir = d.File("sharded");
    o.shard_index = i;
    o.shard_count = 3;
    auto s = RunSweep(spec.value(), o, &dry);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->in_shard, 2u);  // every enumeration index is even (zero == 0), yet the shards are equal
  }
  ASSERT_TRUE(MergeShards(d.File("sharded")).ok());
  EXPECT_EQ(ReadFileText(d.File("sharded/sweep.csv")), ReadFileText(d.File("single/sweep.csv")));
}

// --mpi in a binary built without MPI: exit 2 saying how to build it. (With
// MPI, ctest Sweep.Mpi runs three ranks and compares bytes with --jobs=1.)
TEST(SweepMpi, WithoutMpiTheFlagSaysHowToBuildIt) {
#if ORRERY_BIN_HAS_MPI
  GTEST_SKIP() << "orrery is built with MPI; ctest -R Sweep.Mpi runs the MPI sweep";
#else
  TempDir d;
  WriteSpec(d, kAxes);
  std::string err;
  EXPECT_EQ(orrery::testing::RunCli("sweep " + d.File("sweep.yml") + " --mpi --out=" + d.File("out"), &err), 2);
  EXPECT_NE(err.find("--mpi: this orrery was built without MPI; install Debian's libopenmpi-dev"), std::string::npos)
      << err;
  EXPECT_NE(err.find("cmake -DORRERY_MPI=ON"), std::string::npos) << err;
#endif
}

}  // namespace
}  // namespace orrery::sweep
