// The symmetric fast path decides on the graphs, not on file bytes: traces
// equal up to node ids take it (with reports byte-identical to a full run);
// a run that does not take it says why in one line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "run/symmetry.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

// The report without the line (and fields) that say which path was taken.
std::string Text(RunReport r) {
  r = orrery::testing::WithoutConfig(r);  // --symmetry differs
  r.symmetric = false;
  r.rank_classes = 0;
  r.symmetry_note = "";
  return FormatReportText(r);
}
std::string Json(RunReport r) {
  r = orrery::testing::WithoutConfig(r);
  r.symmetric = false;
  r.rank_classes = 0;
  r.classes.clear();  // the class path's summaries
  r.symmetry_note = "";
  return FormatReportJson(r);
}

Result<RunReport> RunCase(const std::string& dir, const std::string& prefix, const std::string& network,
                          const std::string& system, const std::string& symmetry,
                          const std::string& backend = "analytical", const std::string& memory = "") {
  RunConfig c;
  c.files.workload_prefix = dir + "/" + prefix;
  c.files.network = dir + "/" + network;
  c.files.system = dir + "/" + system;
  if (!memory.empty()) c.files.remote_memory = dir + "/" + memory;
  ParseSymmetry(symmetry, &c.run.symmetry);
  c.run.backend = backend;
  return RunSimulation(c, DefaultBackends());
}

// Per rank: COMP 5 us -> ALL_REDUCE 1 MiB -> COMP 3 us -> ALL_GATHER 64 KiB, the
// second compute also depending on the first. Node ids start at first_id(rank)
// and step by 7, so no two ranks share an id.
void WriteRenamed(const TempDir& d, int npus, const std::function<uint64_t(int)>& first_id,
                  const std::function<void(int, std::vector<ChakraProtoMsg::Node>*)>& tweak = nullptr) {
  testing::WriteTraces(d, npus, [&](int r) {
    const uint64_t b = first_id(r);
    auto c1 = testing::MakeNode(b, ChakraProtoMsg::COMP_NODE);
    c1.set_duration_micros(5);
    auto ar = testing::CollNode(b + 7, 0, 1 << 20);
    ar.add_data_deps(b);
    auto c2 = testing::MakeNode(b + 14, ChakraProtoMsg::COMP_NODE);
    c2.set_duration_micros(3);
    c2.add_data_deps(b + 7);
    c2.add_ctrl_deps(b);
    auto ag = testing::CollNode(b + 21, 2, 64 << 10);
    ag.add_data_deps(b + 14);
    std::vector<ChakraProtoMsg::Node> v = {ag, c2, ar, c1};  // written out of order: order is by id
    if (tweak) tweak(r, &v);
    return v;
  });
  d.Write("network.yml", testing::NetworkYaml("Ring", npus, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 2, "local-mem-bw": 1600, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"]})");
}

TEST(SymmetryGraph, TracesEqualUpToNodeIdsTakeThePath) {
  TempDir d;
  WriteRenamed(d, 8, [](int r) { return 1000 * r + 3; });
  auto on = RunCase(d.path(), "trace", "network.yml", "system.json", "auto");
  auto off = RunCase(d.path(), "trace", "network.yml", "system.json", "off");
  ASSERT_TRUE(on.ok() && off.ok()) << on.status().message() << off.status().message();
  EXPECT_TRUE(on->symmetric) << on->symmetry_note;
  EXPECT_FALSE(off->symmetric);
  EXPECT_EQ(Text(on.value()), Text(off.value()));
  EXPECT_EQ(Json(on.value()), Json(off.value()));
  EXPECT_NE(FormatReportText(off.value()).find("\nsymmetric run: off \u2014 turned off by --symmetry=off\n"),
            std::string::npos);
}

TEST(SymmetryGraph, ADifferentAttributeNamesRankNodeAndField) {
  TempDir d;
  WriteRenamed(
      d, 4, [](int r) { return 100 * r; },
      [](int r, std::vector<ChakraProtoMsg::Node>* v) {
        if (r == 3) (*v)[3].set_duration_micros(6);  // a straggler: the first compute takes 6 us, not 5
      });
  auto r = RunCase(d.path(), "trace", "network.yml", "system.json", "auto");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->symmetric);
  EXPECT_NE(FormatReportText(r.value()).find(
                "\nsymmetric run: off \u2014 rank 3's trace differs from rank 0's at node 300 (duration_micros); "
                "rank classes: a collective on all NPUs spans rank classes 0 (rank 2) and 1 (rank 3)\n"),
            std::string::npos)
      << FormatReportText(r.value());
}

TEST(SymmetryGraph, ADifferentDependencyShapeOrNodeCount) {
  TempDir d;
  WriteRenamed(
      d, 4, [](int r) { return 10 * r; },
      [](int r, std::vector<ChakraProtoMsg::Node>* v) {
        if (r == 2) (*v)[1].clear_ctrl_deps();  // the second compute no longer waits on the first directly
      });
  auto r = RunCase(d.path(), "trace", "network.yml", "system.json", "auto");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->symmetry_note,
            "rank 2's trace differs from rank 0's at node 20 (dependencies); rank classes: a "
            "collective on all NPUs spans rank classes 0 (rank 1) and 1 (rank 2)");

  TempDir e;
  WriteRenamed(
      e, 4, [](int r) { return 10 * r; },
      [](int r, std::vector<ChakraProtoMsg::Node>* v) {
        if (r == 1) v->push_back(testing::MakeNode(10 * r + 28, ChakraProtoMsg::METADATA_NODE));  // one more node
      });
  auto s = RunCase(e.path(), "trace", "network.yml", "system.json", "auto");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->symmetry_note,
            "rank 1's trace differs from rank 0's in its number of nodes (5, rank 0 has 4); rank "
            "classes: a collective on all NPUs spans rank classes 0 (rank 0) and 1 (rank 1)");
}

TEST(SymmetryGraph, ABackendThatIsNotSymmetricSaysSo) {
  TempDir d;
  WriteRenamed(d, 4, [](int r) { return r; });
  auto r = RunCase(d.path(), "trace", "network.yml", "system.json", "auto", "congestion-aware");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->symmetric);
  EXPECT_NE(FormatReportText(r.value()).find("\nsymmetric run: off \u2014 backend congestion-aware is not symmetric"),
            std::string::npos)
      << FormatReportText(r.value());
}

TEST(SymmetryGraph, HashAndDifferenceAgree) {
  TempDir d;
  WriteRenamed(
      d, 3, [](int r) { return 50 * r; },
      [](int r, std::vector<ChakraProtoMsg::Node>* v) {
        if (r == 2) (*v)[3].set_duration_micros(6);
      });
  GraphLoadOptions lo;
  lo.num_npus = 3;
  lo.num_dims = 1;
  auto g0 = LoadNpuGraph(d.File("trace.0.et"), 0, lo);
  auto g1 = LoadNpuGraph(d.File("trace.1.et"), 1, lo);
  auto g2 = LoadNpuGraph(d.File("trace.2.et"), 2, lo);
  ASSERT_TRUE(g0.ok() && g1.ok() && g2.ok());
  EXPECT_EQ(GraphShapeHash(g0.value()), GraphShapeHash(g1.value()));
  EXPECT_EQ(GraphDifference(g0.value(), g1.value()), "");
  EXPECT_NE(GraphShapeHash(g0.value()), GraphShapeHash(g2.value()));
  EXPECT_EQ(GraphDifference(g0.value(), g2.value()), "at node 100 (duration_micros)");
}

// ASTRA-sim's own example traces differ between ranks only in node ids: every
// analytical conformance case on them takes the path, with the full run's report.
TEST(SymmetryGraph, AstraSimExampleTracesTakeThePath) {
  const std::string conf = std::string(ORRERY_SHARED_DIR) + "/conformance/astra-sim";
  if (access((conf + "/expected.tsv").c_str(), R_OK) != 0) GTEST_SKIP() << "no conformance data at " << conf;
  std::ifstream in(conf + "/expected.tsv");
  std::string line;
  std::getline(in, line);
  int symmetric = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, '\t')) c.push_back(x);
    if (c[1] != "analytical" || c[0].find("custom") != std::string::npos) continue;
    auto on = RunCase(conf, c[2], c[3], c[4], "auto", "analytical", c[5]);
    auto off = RunCase(conf, c[2], c[3], c[4], "off", "analytical", c[5]);
    ASSERT_TRUE(on.ok() && off.ok()) << c[0];
    EXPECT_EQ(Text(on.value()), Text(off.value())) << c[0];
    EXPECT_EQ(Json(on.value()), Json(off.value())) << c[0];
    // Off only for reasons of configuration (an algorithm, shared memory), never the traces.
    EXPECT_EQ(on->symmetry_note.find("'s trace differs"), std::string::npos) << c[0] << ": " << on->symmetry_note;
    symmetric += on->symmetric;
  }
  EXPECT_GE(symmetric, 30);  // 33 of the 39 analytical cases; 7 with the byte comparison before (the others: an
                             // algorithm, shared memory, point-to-point)
}

}  // namespace
}  // namespace orrery
