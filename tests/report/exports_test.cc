// Every rank's collectives (the JSON report's rank 0 list and totals,
// --collectives=FILE.csv streamed) and the per-link export (--links=FILE.csv).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "run/examples.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

// Four NPUs, each computes (rank 2 for 30 us, the others 10 us) then joins a
// 1 KiB all-reduce: the all-reduce starts at 10000 on ranks 0, 1, 3 and at 30000
// on rank 2, and ends after 30000 everywhere.
TEST(Exports, EveryRanksCollectivesInJsonAndCsv) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 50));
  testing::WriteTraces(d, 4, [](int r) {
    auto comp = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(r == 2 ? 30 : 10);
    auto ar = testing::CollNode(2, 0, 1024);
    ar.add_data_deps(1);
    ar.set_name("grad, \"all\"");
    return std::vector<ChakraProtoMsg::Node>{comp, ar};
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.observe.all_collectives = true;
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<CollectiveReport> all = testing::EveryRankCollectives(r.value());
  ASSERT_EQ(all.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    const CollectiveReport& x = all[k];
    EXPECT_EQ(x.rank, k);
    EXPECT_EQ(x.start_ns, k == 2 ? 30000u : 10000u);
    EXPECT_GT(x.end_ns, 30000u);
    EXPECT_EQ(x.bytes, 1024u);
  }
  EXPECT_EQ(r->collectives.size(), 1u);  // the text report's table stays rank 0's
  // The JSON report lists rank 0's and counts every rank's (4 all-reduces, their durations summed).
  const std::string json = FormatReportJson(r.value());
  EXPECT_EQ(json.find("\"rank\": 3,\n   \"node_id\": 2"), std::string::npos) << json;
  Tick total = 0;
  for (const CollectiveReport& x : all) total += x.end_ns - x.start_ns;
  EXPECT_NE(json.find("\"collective_totals\": {\n  \"count\": 4,\n  \"duration_ns\": " + std::to_string(total) +
                      "\n }"),
            std::string::npos)
      << json;
  const auto rows = Lines(testing::CollectivesCsv(r.value()));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], "rank,node_id,name,type,bytes,algorithm,start_ns,end_ns,duration_ns");
  EXPECT_EQ(rows[3].rfind("2,2,\"grad, \"\"all\"\"\",ALL_REDUCE,1024,ALL_REDUCE:ring,30000,", 0), 0u) << rows[3];
}

// The default example is symmetric: rank 0's collective stands for each of the 8
// ranks. On the congestion-aware backend its ring all-reduce (1 MiB, 4 chunks of
// 256 KiB, 14 steps of 32 KiB each, one direction) puts 4 * 14 * 32768 = 1835008
// bytes on each of the 8 links.
TEST(Exports, SymmetricCollectivesForEveryRankAndLinks) {
  TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("default", d.path(), &c).ok());
  c.observe.all_collectives = true;
  c.observe.collect_links = true;
  c.run.backend = "congestion-aware";
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto rows = Lines(testing::CollectivesCsv(r.value()));
  ASSERT_EQ(rows.size(), 1u + 8u);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(rows[1 + k].rfind(std::to_string(k) + ",0,", 0), 0u) << rows[1 + k];
  const auto links = Lines(FormatLinksCsv(r.value()));
  ASSERT_EQ(links.size(), 1u + 8u);
  EXPECT_EQ(links[0], "link,dim,bytes,busy_ns");
  for (size_t k = 1; k < links.size(); ++k) EXPECT_NE(links[k].find(",0,1835008,"), std::string::npos) << links[k];
  // collect_links alone does not list the links in the report.
  EXPECT_EQ(FormatReportText(r.value()).find("busiest links"), std::string::npos);
}

TEST(Exports, BadPathsExitTwoAndAnalyticalLinksSaySo) {
  TempDir d;
  for (const char* flag : {"--collectives", "--links"}) {
    std::string err;
    EXPECT_EQ(testing::RunCli(std::string("run --example=default ") + flag + "=/nonexistent-dir/x.csv", &err), 2);
    EXPECT_NE(err.find(std::string(flag) +
                       " = \"/nonexistent-dir/x.csv\": cannot write it (No such file or directory); "
                       "allowed: a file path in an existing, writable directory"),
              std::string::npos)
        << err;
  }
  std::string err;
  EXPECT_EQ(testing::RunCli("run --example=default --links=" + d.File("l.csv"), &err), 0) << err;
  EXPECT_NE(err.find("--links: backend analytical has no per-link statistics"), std::string::npos) << err;
  std::ifstream in(d.File("l.csv"));
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "link,dim,bytes,busy_ns\n");
}

// WriteCollectivesCsv streams: 20,000 ranks copying one simulated rank's
// collective give blocks of about 1 MiB (never the whole table at once), whose
// concatenation is the table; a failing writer stops it with its own error.
TEST(Exports, CollectivesCsvIsWrittenInBlocks) {
  RunReport r;
  r.npus = 20000;
  r.all_collectives.simulated.push_back(CollectiveReport{0, 7, "ar", "ALL_REDUCE", 4096, "ALL_REDUCE:ring", 100, 350});
  r.all_collectives.source.assign(r.npus, 0);
  std::string want = "rank,node_id,name,type,bytes,algorithm,start_ns,end_ns,duration_ns\n";
  for (int rank = 0; rank < r.npus; ++rank)
    want += std::to_string(rank) + ",7,ar,ALL_REDUCE,4096,ALL_REDUCE:ring,100,350,250\n";
  ASSERT_GT(want.size(), 1u << 20);
  std::vector<size_t> blocks;
  std::string got;
  ASSERT_TRUE(WriteCollectivesCsv(r, [&](std::string_view text) {
                got += text;
                blocks.push_back(text.size());
                return Status::Ok();
              }).ok());
  EXPECT_EQ(got, want);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_LT(blocks[0], (1u << 20) + 100);
  int calls = 0;
  const Status st = WriteCollectivesCsv(r, [&](std::string_view) {
    ++calls;
    return Status::Env("--collectives = \"x.csv\": disk full");
  });
  EXPECT_EQ(st.message(), "--collectives = \"x.csv\": disk full");
  EXPECT_EQ(calls, 1);
  // Nothing recorded: the header alone.
  EXPECT_EQ(testing::CollectivesCsv(RunReport{}),
            "rank,node_id,name,type,bytes,algorithm,start_ns,end_ns,duration_ns\n");
}

}  // namespace
}  // namespace orrery
