// The CSV exports say what the JSON report says: the per-rank table
// (--report-format=csv) has one row per rank with the numbers of the JSON's
// `npus` entries, --collectives=FILE.csv has one row per collective of every
// rank, rank 0's equal to the JSON's `collectives` and as many as its
// `collective_totals` count (a symmetric run: rank 0's list for each rank), and
// --links=FILE.csv the JSON's `links`. The CSV files
// are read back with the strict reader of explore/csv.h.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "explore/csv.h"
#include "report/timeline.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::TempDir;

using orrery::testing::ReadFileText;

// A JSON value as the CSV writes it: strings bare, integers in decimal.
std::string AsCsv(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Each CSV row equals the JSON object at the same position, column by column
// (the CSV's column names are the JSON's keys; duration_ns is end_ns - start_ns).
void ExpectRowsEqual(const CsvTable& t, const std::vector<json>& want, const std::string& what) {
  ASSERT_EQ(t.rows.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    for (size_t c = 0; c < t.header.size(); ++c) {
      const std::string& col = t.header[c];
      std::string expect;
      if (col == "duration_ns") {
        expect = std::to_string(want[i].at("end_ns").get<uint64_t>() - want[i].at("start_ns").get<uint64_t>());
      } else {
        ASSERT_TRUE(want[i].contains(col)) << what << ": the JSON has no \"" << col << "\"";
        expect = AsCsv(want[i].at(col));
      }
      EXPECT_EQ(t.rows[i][c], expect) << what << " row " << i + 1 << " column " << col;
    }
  }
}

struct Exports {
  json report;
  CsvTable per_rank, collectives, links;
};

// One run with --report-format=json and both exports, and the same with --report-format=csv.
Exports RunAndExport(const std::string& args) {
  TempDir d;
  Exports e;
  std::string out, err;
  EXPECT_EQ(testing::RunCliCapture("run " + args + " --report-format=json --collectives=" + d.File("c.csv") +
                                       " --links=" + d.File("l.csv"),
                                   &out, &err),
            0)
      << args << ": " << err;
  e.report = json::parse(out);
  std::string csv;
  EXPECT_EQ(testing::RunCliCapture("run " + args + " --report-format=csv", &csv, &err), 0) << err;
  auto parse = [&](const std::string& text, const std::string& name, CsvTable* t) {
    auto r = ParseCsv(text, name);
    ASSERT_TRUE(r.ok()) << args << ": " << r.status().message();
    *t = r.value();
  };
  parse(csv, "per-rank.csv", &e.per_rank);
  parse(ReadFileText(d.File("c.csv")), "c.csv", &e.collectives);
  parse(ReadFileText(d.File("l.csv")), "l.csv", &e.links);
  return e;
}

// Checks every table against the JSON.
void ExpectCsvEqualsJson(const Exports& e, const std::string& what) {
  const json& j = e.report;
  const int npus = j.at("npu_count").get<int>();
  // Per rank: exactly the nine columns, one row per rank, in rank order.
  EXPECT_EQ(e.per_rank.header,
            (std::vector<std::string>{"rank", "finished_ns", "compute_ns", "comm_ns", "exposed_comm_ns", "idle_ns",
                                      "remote_mem_ns", "mem_stall_ns", "peer_wait_ns"}));
  ASSERT_EQ(j.at("npus").size(), static_cast<size_t>(npus)) << what;
  ExpectRowsEqual(e.per_rank, j.at("npus").get<std::vector<json>>(), what + ", per rank");
  // Collectives: the JSON lists rank 0's and counts every rank's; the CSV has
  // every rank's, each rank's equal to those of the rank it copies (every rank
  // rank 0 in a symmetric run; its class's representative with rank classes).
  EXPECT_EQ(e.collectives.header, (std::vector<std::string>{"rank", "node_id", "name", "type", "bytes", "algorithm",
                                                            "start_ns", "end_ns", "duration_ns"}));
  std::vector<json> colls = j.at("collectives").get<std::vector<json>>();
  for (const json& c : colls) EXPECT_EQ(c.at("rank"), 0) << what;
  std::vector<int> source(npus);
  for (int rank = 0; rank < npus; ++rank) source[rank] = j.at("symmetric").get<bool>() ? 0 : rank;
  for (const json& k : j.value("classes", json::array())) {
    // The members in --timeline-ranks' notation.
    auto members = ParseRankSelection(k.at("ranks").get<std::string>(), npus);
    ASSERT_TRUE(members.ok()) << members.status().message();
    for (int rank = 0; rank < npus; ++rank) {
      if (members.value()[rank]) source[rank] = k.at("representative");
    }
  }
  std::vector<std::vector<std::vector<std::string>>> rows_of(npus);  // the CSV's rows by rank, rank column dropped
  uint64_t duration = 0;
  for (const auto& row : e.collectives.rows) {
    rows_of.at(std::stoi(row[0])).emplace_back(row.begin() + 1, row.end());
    duration += std::stoull(row.back());
  }
  EXPECT_EQ(e.collectives.rows.size(), j.at("collective_totals").at("count").get<size_t>()) << what;
  EXPECT_EQ(duration, j.at("collective_totals").at("duration_ns").get<uint64_t>()) << what;
  CsvTable rank0;
  rank0.header = e.collectives.header;
  for (size_t i = 0; i < e.collectives.rows.size() && e.collectives.rows[i][0] == "0"; ++i) {
    rank0.rows.push_back(e.collectives.rows[i]);
  }
  ExpectRowsEqual(rank0, colls, what + ", rank 0's collectives");
  for (int rank = 0; rank < npus; ++rank) {
    EXPECT_EQ(rows_of[rank], rows_of[source[rank]]) << what << ": rank " << rank << " against " << source[rank];
  }
  EXPECT_EQ(e.links.header, (std::vector<std::string>{"link", "dim", "bytes", "busy_ns"}));
  ExpectRowsEqual(e.links, j.contains("links") ? j.at("links").get<std::vector<json>>() : std::vector<json>{},
                  what + ", links");
}

// The default example: 8 NPUs on a ring, one 1 MiB all-reduce each.
TEST(ReportCsv, SymmetricRunRepeatsTheRepresentativeForEveryRank) {
  const Exports e = RunAndExport("--example=default");
  ASSERT_TRUE(e.report.at("symmetric").get<bool>());
  EXPECT_EQ(e.per_rank.rows.size(), 8u);
  EXPECT_EQ(e.collectives.rows.size(), 8u);  // 1 collective x 8 ranks
  EXPECT_EQ(e.links.rows.size(), 0u);        // analytical: no per-link statistics
  ExpectCsvEqualsJson(e, "default");
}

// Every rank simulated, on the congestion-aware backend: its ring all-reduce
// uses one direction of each of the 8 ring links.
TEST(ReportCsv, FullRunWithLinks) {
  const Exports e = RunAndExport("--example=default --symmetry=off --network-backend=congestion-aware --link-stats");
  ASSERT_FALSE(e.report.at("symmetric").get<bool>());
  EXPECT_EQ(e.collectives.rows.size(), 8u);
  EXPECT_EQ(e.links.rows.size(), 8u);
  ExpectCsvEqualsJson(e, "congestion-aware");
}

TEST(ReportCsv, DataParallelExampleFullRun) {
  const Exports e = RunAndExport("--example=data-parallel --symmetry=off --iterations=2");
  const size_t ranks = e.report.at("npu_count").get<size_t>();
  EXPECT_EQ(e.per_rank.rows.size(), ranks);
  EXPECT_EQ(e.collectives.rows.size() % ranks, 0u);  // each rank issues the same collectives
  EXPECT_GT(e.collectives.rows.size(), ranks);
  ExpectCsvEqualsJson(e, "data-parallel");
}

// A generated pipeline run by rank classes (2 stages): each rank's rows are
// its stage representative's, as the JSON's classes say.
TEST(ReportCsv, RankClassesGiveEachRankItsRepresentativesRows) {
  TempDir d;
  d.Write("sys.json",
          R"({"preferred-dataset-splits": 2, "roofline-enabled": 1, "peak-perf": 1000, "local-mem-bw": 1600})");
  const Exports e = RunAndExport(
      "--generate=\"--model=llama3-8b --tp=2 --pp=2 --dp=2 --microbatches=2 "
      "--allow-over-capacity\" --system-configuration=" +
      d.File("sys.json") + " --network-configuration=\"Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)\"");
  ASSERT_EQ(e.report.at("rank_classes"), 2);
  ASSERT_EQ(e.report.at("classes").size(), 2u);
  EXPECT_GT(e.collectives.rows.size(), 8u);
  ExpectCsvEqualsJson(e, "generated pipeline");
}

// Ranks that differ (rank 2 is late; not symmetric), two collectives each, one
// named with a comma and quotes (quoted in the CSV, plain in the JSON).
TEST(ReportCsv, DifferentRanksAndQuotedNames) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 2, 10, 50));
  testing::WriteTraces(d, 4, [](int r) {
    auto comp = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(r == 2 ? 30 : 10);
    auto ar = testing::CollNode(2, 0, 1 << 20);
    ar.add_data_deps(1);
    ar.set_name("grad, \"all\"");
    auto ag = testing::CollNode(3, 2, 1 << 16);
    ag.add_data_deps(2);
    return std::vector<ChakraProtoMsg::Node>{comp, ar, ag};
  });
  const std::string inputs = "--workload-configuration=" + d.File("trace") +
                             " --network-configuration=" + d.File("network.yml") +
                             " --system-configuration=" + d.File("system.json");
  for (const std::string backend : {"analytical", "congestion-aware --link-stats"}) {
    const Exports e = RunAndExport(inputs + " --network-backend=" + backend);
    EXPECT_EQ(e.report.at("collectives_note"), "rank 0's collectives; every rank's: orrery run --collectives=FILE.csv");
    ASSERT_EQ(e.collectives.rows.size(), 8u);  // 2 collectives x 4 ranks
    EXPECT_EQ(e.collectives.rows[4][0], "2");
    EXPECT_EQ(e.collectives.rows[4][2], "grad, \"all\"");
    EXPECT_EQ(e.collectives.rows[4][6], "30000");  // rank 2 joins its all-reduce after 30 us of compute
    ExpectCsvEqualsJson(e, backend);
  }
}

}  // namespace
}  // namespace orrery
