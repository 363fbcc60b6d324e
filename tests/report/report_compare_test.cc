// `orrery report compare A.json B.json`: the same workload on a ring at 50 and
// at 100 GB/s (expected numbers from the ring all-reduce formula), category
// order and zero-filled categories on hand-written reports, the three output
// formats, determinism, config hashes, and hostile inputs (exit 2, one message
// naming the file, the field, the value and what was expected).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/tick.h"
#include "explore/csv.h"
#include "report/compare.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::TempDir;

constexpr int kNpus = 4;
constexpr uint64_t kBytes = 1 << 20;
constexpr Tick kComputeNs = 10000;

// Ring all-reduce of kBytes on kNpus, one chunk, no latency, no endpoint delay,
// memory so fast the reduction takes 0 ns: 2(p-1) steps, each sending S/p bytes.
Tick AllReduceNs(double gbps) {
  const uint64_t msg = kBytes / kNpus;
  return 2 * (kNpus - 1) * static_cast<Tick>(msg / GiBpsToBytesPerNs(gbps));
}

// Every rank computes 10 us, then all-reduces 1 MiB; the JSON report of it on a
// ring of `gbps`, with the critical path.
std::string RingRun(const TempDir& d, double gbps, const std::string& extra, const std::string& name) {
  d.Write(name + ".yml", testing::NetworkYaml("Ring", kNpus, gbps, 0));
  d.Write("system.json", testing::SystemJson("ring", 1, 0, 1e9));
  testing::WriteTraces(d, kNpus, [](int r) {
    auto comp = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(kComputeNs / 1000);
    auto ar = testing::CollNode(2, 0, kBytes);
    ar.add_data_deps(1);
    return std::vector<ChakraProtoMsg::Node>{comp, ar};
  });
  std::string out, err;
  EXPECT_EQ(testing::RunCliCapture("run --workload-configuration=" + d.File("trace") + " --network-configuration=" +
                                       d.File(name + ".yml") + " --system-configuration=" + d.File("system.json") +
                                       " --critical-path --report-format=json " + extra,
                                   &out, &err),
            0)
      << err;
  d.Write(name + ".json", out);
  return d.File(name + ".json");
}

const json* FindRow(const json& rows, const std::string& label) {
  for (const json& r : rows) {
    if (r.at("row") == label) return &r;
  }
  return nullptr;
}

void ExpectRow(const json& cmp, const std::string& label, double a, double b) {
  const json* r = FindRow(cmp.at("rows"), label);
  ASSERT_NE(r, nullptr) << "no row '" << label << "' in " << cmp.dump(1);
  EXPECT_EQ(r->at("a").get<double>(), a) << label;
  EXPECT_EQ(r->at("b").get<double>(), b) << label;
  EXPECT_EQ(r->at("diff").get<double>(), b - a) << label;
  if (a > 0) {
    EXPECT_DOUBLE_EQ(r->at("ratio").get<double>(), b / a) << label;
  }
}

TEST(ReportCompare, TwiceTheBandwidthHalvesTheCommunication) {
  TempDir d;
  const Tick comm_a = AllReduceNs(50), comm_b = AllReduceNs(100);
  ASSERT_EQ(comm_a, 2 * comm_b);                  // 262144 B at 53.687 B/ns: 4882 ns a step; at twice that, 2441
  const std::string a = RingRun(d, 50, "", "a");  // symmetric: rank 0 stands for all
  const std::string b = RingRun(d, 100, "--symmetry=off", "b");  // every rank simulated
  auto out = CompareReports(CompareOptions{a, b, "json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json cmp = json::parse(out.value());
  ExpectRow(cmp, "finished (max over ranks)", kComputeNs + comm_a, kComputeNs + comm_b);
  ExpectRow(cmp, "slowest rank: compute", kComputeNs, kComputeNs);
  ExpectRow(cmp, "slowest rank: exposed communication", comm_a, comm_b);
  ExpectRow(cmp, "slowest rank: idle", 0, 0);
  ExpectRow(cmp, "mean over ranks: exposed communication", comm_a, comm_b);
  ExpectRow(cmp, "compute", kComputeNs, kComputeNs);  // critical path
  ExpectRow(cmp, "communication dim0 (Ring)", comm_a, comm_b);
  // Each rank sends 2(p-1) messages of S/p bytes, each busy on one link for its serialisation.
  const double messages = kNpus * 2 * (kNpus - 1), msg = kBytes / kNpus;
  ExpectRow(cmp, "dim0 (Ring) messages", messages, messages);
  ExpectRow(cmp, "dim0 (Ring) bytes", messages * msg, messages * msg);
  ExpectRow(cmp, "dim0 (Ring) busy (ns)", messages * comm_a / (2 * (kNpus - 1)), messages * comm_b / (2 * (kNpus - 1)));
  ExpectRow(cmp, "messages", messages, messages);
  // One all-reduce per rank: the symmetric report lists rank 0's, the full one every rank's.
  ExpectRow(cmp, "collectives (all ranks)", kNpus, kNpus);
  ExpectRow(cmp, "collective time (all ranks, ns)", kNpus * comm_a, kNpus * comm_b);
  const json& largest = cmp.at("largest_change");
  EXPECT_EQ(largest.at("category"), "communication dim0 (Ring)");
  EXPECT_EQ(largest.at("diff_ns").get<double>(), -static_cast<double>(comm_b));
  EXPECT_EQ(largest.at("text"), "largest change: communication dim0 (Ring) -14.6 us (-50.0%)");  // 14646 ns of 29292
  // Every run report carries its configuration's hash (run/spec.h): 50 and 100 GB/s differ.
  const auto hash_of = [](const std::string& file) {
    std::ifstream in(file);
    return json::parse(in).at("config").at("hash").get<std::string>();
  };
  const std::string hash_a = hash_of(a), hash_b = hash_of(b);
  ASSERT_NE(hash_a, hash_b);
  EXPECT_EQ(cmp.at("config_hashes"), "differ");

  // The text table: the same numbers, the largest change marked and named.
  auto text = CompareReports(CompareOptions{a, b, "text"});
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("a: " + a + " (backend analytical, 4 NPUs, slowest rank 0, config " + hash_a + ")\n"),
            std::string::npos)
      << *text;
  const std::string path_row = "  communication dim0 (Ring)";
  const size_t at = text->find(path_row + " ");
  ASSERT_NE(at, std::string::npos) << *text;
  const std::string line = text->substr(at, text->find('\n', at) - at);
  EXPECT_NE(line.find(" " + std::to_string(comm_a) + " "), std::string::npos) << line;
  EXPECT_NE(line.find(" " + std::to_string(comm_b) + " "), std::string::npos) << line;
  EXPECT_NE(line.find(" -" + std::to_string(comm_b) + " "), std::string::npos) << line;
  EXPECT_NE(line.find("0.500  <- largest change"), std::string::npos) << line;
  EXPECT_NE(text->find("\nlargest change: communication dim0 (Ring) -14.6 us (-50.0%)\n"), std::string::npos);

  // CSV: the strict reader takes it; one row per JSON row, the same values.
  auto csv = CompareReports(CompareOptions{a, b, "csv"});
  ASSERT_TRUE(csv.ok());
  auto table = ParseCsv(csv.value(), "compare.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  ASSERT_EQ(table->rows.size(), cmp.at("rows").size());
  EXPECT_EQ(table->header, (std::vector<std::string>{"section", "row", "unit", "a", "b", "diff", "ratio", "largest"}));
  int marked = 0;
  for (const auto& row : table->rows) {
    if (row[7] == "1") {
      ++marked;
      EXPECT_EQ(row[1], "communication dim0 (Ring)");
      EXPECT_EQ(row[5], "-" + std::to_string(comm_b));
    }
  }
  EXPECT_EQ(marked, 1);

  // Deterministic: the same inputs, the same bytes; through the command line too.
  std::string cli, err;
  ASSERT_EQ(testing::RunCliCapture("report compare " + a + " " + b, &cli, &err), 0) << err;
  EXPECT_EQ(cli, text.value());
  ASSERT_EQ(testing::RunCliCapture("report compare " + a + " " + b + " --format=json", &cli, &err), 0) << err;
  EXPECT_EQ(cli, out.value());
}

// A minimal report written by hand: two ranks, one dimension.
json HandReport() {
  return json::parse(R"J({
    "backend": "analytical", "npu_count": 2, "iterations": 1, "symmetric": false, "symmetry": "", "finished_ns": 500,
    "messages": 2,
    "npus": [
      {"rank": 0, "finished_ns": 400, "compute_ns": 100, "comm_ns": 300, "exposed_comm_ns": 300, "mem_stall_ns": 0,
       "remote_mem_ns": 0, "idle_ns": 0},
      {"rank": 1, "finished_ns": 500, "compute_ns": 200, "comm_ns": 300, "exposed_comm_ns": 250, "mem_stall_ns": 40,
       "remote_mem_ns": 40, "idle_ns": 10}],
    "collectives": [{"rank": 0, "node_id": 1, "name": "", "type": "ALL_REDUCE", "bytes": 8, "algorithm": "ALL_REDUCE:ring",
                     "start_ns": 100, "end_ns": 400}],
    "memory": {"backend": "astra-sim", "accesses": 1, "bytes": 64, "wait_ns": 7},
    "dims": [{"block": "Switch", "npus": 2, "bandwidth_gbps": 50, "latency_ns": 500, "messages": 2, "bytes": 16,
              "busy_ns": 20, "utilization": 0.01}],
    "critical_path": {"rank": 1, "finished_ns": 500, "representative": false, "other_ranks": [], "segments": [],
                      "categories": [{"category": "communication dim1 (Switch)", "ns": 300},
                                     {"category": "compute", "ns": 200}]}})J");
}

std::string Write(const TempDir& d, const std::string& name, const json& j) {
  d.Write(name, j.dump());
  return d.File(name);
}

// Categories in a fixed order (compute, communication by name, memory, waiting,
// idle), a category one report lacks is 0 there, the slowest rank is the one
// that finishes last, means are over ranks, and config hashes are compared.
TEST(ReportCompare, CategoryOrderMissingCategoriesAndHashes) {
  TempDir d;
  json a = HandReport(), b = HandReport();
  b["critical_path"]["categories"] = json::parse(R"J([{"category": "idle", "ns": 5},
      {"category": "waiting on another rank", "ns": 20}, {"category": "communication dim0 (Ring)", "ns": 50},
      {"category": "compute", "ns": 200}, {"category": "memory", "ns": 1}])J");
  b["npus"][0]["finished_ns"] = 600;  // now rank 0 is the slowest
  a["config"] = {{"hash", "aaaa"}};
  b["config"] = {{"hash", "bbbb"}, {"network", "Ring(2)"}};
  auto out = CompareReports(CompareOptions{Write(d, "a.json", a), Write(d, "b.json", b), "json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json cmp = json::parse(out.value());
  std::vector<std::string> path;
  for (const json& r : cmp.at("rows")) {
    if (r.at("section") == "critical path") path.push_back(r.at("row"));
  }
  EXPECT_EQ(path, (std::vector<std::string>{"compute", "communication dim0 (Ring)", "communication dim1 (Switch)",
                                            "memory", "waiting on another rank", "idle"}));
  ExpectRow(cmp, "communication dim1 (Switch)", 300, 0);
  ExpectRow(cmp, "communication dim0 (Ring)", 0, 50);
  ExpectRow(cmp, "finished (max over ranks)", 500, 600);
  ExpectRow(cmp, "slowest rank: compute", 200, 100);  // rank 1 in a, rank 0 in b
  ExpectRow(cmp, "mean over ranks: exposed communication", 275, 275);
  ExpectRow(cmp, "mean over ranks: memory stall", 20, 20);
  ExpectRow(cmp, "memory queueing (ns)", 7, 7);
  EXPECT_EQ(cmp.at("a").at("slowest_rank"), 1);
  EXPECT_EQ(cmp.at("b").at("slowest_rank"), 0);
  EXPECT_EQ(cmp.at("config_hashes"), "differ");
  EXPECT_EQ(cmp.at("largest_change").at("text"), "largest change: communication dim1 (Switch) -300 ns (-100.0%)");

  b["config"]["hash"] = "aaaa";
  auto same = CompareReports(CompareOptions{Write(d, "a.json", a), Write(d, "b.json", b), "text"});
  ASSERT_TRUE(same.ok());
  EXPECT_NE(same->find("\nconfig: the same hash\n"), std::string::npos) << *same;
  // Without paths on both sides the largest change is among the slowest rank's categories.
  b.erase("critical_path");
  b.erase("config");
  auto no_path = CompareReports(CompareOptions{Write(d, "a.json", a), Write(d, "b.json", b), "text"});
  ASSERT_TRUE(no_path.ok());
  EXPECT_EQ(no_path->find("critical path"), std::string::npos);
  EXPECT_EQ(no_path->find("config:"), std::string::npos);
  // Slowest rank a: rank 1 (compute 200, exposed 250, memory 40, idle 10); b: rank 0 (100, 300, 0, 0).
  EXPECT_NE(no_path->find("\nlargest change: compute (slowest rank) -100 ns (-50.0%)\n"), std::string::npos)
      << *no_path;
}

// Every rank's collectives, counted and summed, from each form a report has
// had: collective_totals (now: the collectives array is rank 0's); every rank's
// listed (a full run, and a run by rank classes, which also had a note);
// rank 0's listed for every rank with a note (a symmetric run). The hand
// report's two ranks: rank 0's all-reduce 100 -> 400, rank 1's 150 -> 400.
TEST(ReportCompare, CollectivesOfEveryRankFromNewAndOldReports) {
  TempDir d;
  const json rank1 = json::parse(R"J({"rank": 1, "node_id": 1, "name": "", "type": "ALL_REDUCE", "bytes": 8,
      "algorithm": "ALL_REDUCE:ring", "start_ns": 150, "end_ns": 400})J");
  json now = HandReport();
  now["collectives_note"] = "rank 0's collectives; every rank's: orrery run --collectives=FILE.csv";
  now["collective_totals"] = {{"count", 2}, {"duration_ns", 550}};
  json full = HandReport();
  full["collectives"].push_back(rank1);
  json classes = full;
  classes["rank_classes"] = 2;
  classes["collectives_note"] =
      "rank classes: each rank's collectives are its class representative's (with its node ids)";
  json symmetric = HandReport();
  symmetric["symmetric"] = true;
  symmetric["collectives_note"] = "symmetric run: rank 0's collectives are every rank's";
  const std::string a = Write(d, "now.json", now);
  const std::pair<json, double> old[] = {{full, 550}, {classes, 550}, {symmetric, 600}};
  for (const auto& [report, ns] : old) {
    auto out = CompareReports(CompareOptions{a, Write(d, "old.json", report), "json"});
    ASSERT_TRUE(out.ok()) << out.status().message();
    const json cmp = json::parse(out.value());
    ExpectRow(cmp, "collectives (all ranks)", 2, 2);
    ExpectRow(cmp, "collective time (all ranks, ns)", 550, ns);
  }
}

// Waiting on peers is a row of the slowest rank's and the mean rank's split. A
// report written before that category existed has no peer_wait_ns: it reads as
// 0. Here b's slowest rank (rank 1) waits 150 of the 250 ns a called exposed
// communication: the largest change of the slowest rank's five categories is
// that 150 ns, tied in size with exposed communication's -150 (the first wins:
// rows in order compute, exposed communication, memory stall, waiting, idle).
TEST(ReportCompare, WaitingOnPeersIsARowAndOptionalInOlderReports) {
  TempDir d;
  json a = HandReport(), b = HandReport();
  a.erase("critical_path");
  b.erase("critical_path");
  b["npus"][0]["peer_wait_ns"] = 0;
  b["npus"][1]["exposed_comm_ns"] = 100;
  b["npus"][1]["peer_wait_ns"] = 150;
  auto out = CompareReports(CompareOptions{Write(d, "a.json", a), Write(d, "b.json", b), "json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json cmp = json::parse(out.value());
  ExpectRow(cmp, "slowest rank: waiting on peers", 0, 150);
  ExpectRow(cmp, "mean over ranks: waiting on peers", 0, 75);
  ExpectRow(cmp, "slowest rank: exposed communication", 250, 100);
  EXPECT_EQ(cmp.at("largest_change").at("text"),
            "largest change: exposed communication (slowest rank) -150 ns (-60.0%)");
  // A present but mistyped value is still an error naming the field.
  b["npus"][1]["peer_wait_ns"] = "x";
  auto bad = CompareReports(CompareOptions{Write(d, "a.json", a), Write(d, "b.json", b), "text"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("field \"npus[1].peer_wait_ns\" is \"x\" (a string)"), std::string::npos)
      << bad.status().message();
}

// Networks of different shapes: a dimension one report lacks is null there
// (and "-" in the text), a block that differs shows both names.
TEST(ReportCompare, DifferentNetworks) {
  TempDir d;
  json a = HandReport(), b = HandReport();
  b["dims"][0]["block"] = "Ring";
  b["dims"].push_back(b["dims"][0]);
  b["dims"][1]["bytes"] = 48;
  auto out = CompareReports(CompareOptions{Write(d, "a.json", a), Write(d, "b.json", b), "json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json cmp = json::parse(out.value());
  ExpectRow(cmp, "dim0 (Switch/Ring) bytes", 16, 16);
  const json* extra = FindRow(cmp.at("rows"), "dim1 (Ring) bytes");
  ASSERT_NE(extra, nullptr) << out.value();
  EXPECT_TRUE(extra->at("a").is_null());
  EXPECT_EQ(extra->at("b"), 48);
  EXPECT_TRUE(extra->at("diff").is_null());
  EXPECT_TRUE(extra->at("ratio").is_null());
  auto text = CompareReports(CompareOptions{d.File("a.json"), d.File("b.json"), "text"});
  ASSERT_TRUE(text.ok());
  const size_t at = text->find("\n  dim1 (Ring) bytes ");
  ASSERT_NE(at, std::string::npos) << *text;
  std::stringstream line(text->substr(at + 1, text->find('\n', at + 1) - at - 1));
  std::vector<std::string> words;
  for (std::string w; line >> w;) words.push_back(w);
  EXPECT_EQ(words, (std::vector<std::string>{"dim1", "(Ring)", "bytes", "-", "48", "-", "-"}));
}

// Each hostile input: exit 2 from the command line, one message naming the file
// and the field, the value found and what was expected.
TEST(ReportCompare, BadInputsNameTheFileTheFieldAndWhatWasExpected) {
  TempDir d;
  const std::string good = Write(d, "good.json", HandReport());
  struct Case {
    std::string name;
    std::function<void(json&)> change;  // applied to a copy of HandReport()
    std::string raw;                    // or the file's whole text
    std::string want;
  };
  const std::vector<Case> cases = {
      {"garbage", nullptr, "rank,finished_ns\n0,5\n", "bad.json: not JSON: parse error at line 1, column 1"},
      // 35 characters, then the end: column 36.
      {"truncated", nullptr, R"({"backend": "analytical", "npus": [)",
       "bad.json: not JSON: parse error at line 1, column 36"},
      {"array", nullptr, "[1, 2]", "bad.json: the top level is an array of 2 element(s); expected a JSON object"},
      {"timeline", nullptr, R"({"traceEvents": [], "displayTimeUnit": "ns"})", "bad.json: a trace-event timeline"},
      {"empty object", nullptr, "{}",
       "bad.json: field \"backend\" is missing; expected a string (is this a report of 'orrery run "
       "--report-format=json'?)"},
      {"missing split", [](json& j) { j["npus"][1].erase("idle_ns"); }, "",
       "bad.json: field \"npus[1].idle_ns\" is missing; expected a non-negative integer (nanoseconds)"},
      {"string time", [](json& j) { j["npus"][0]["finished_ns"] = "400"; }, "",
       "bad.json: field \"npus[0].finished_ns\" is \"400\" (a string); expected a non-negative integer (nanoseconds)"},
      {"negative", [](json& j) { j["npus"][1]["compute_ns"] = -5; }, "",
       "bad.json: field \"npus[1].compute_ns\" is -5 (a negative integer); expected a non-negative integer"},
      {"npus not array", [](json& j) { j["npus"] = json::object(); }, "",
       "bad.json: field \"npus\" is an object; expected an array of per-rank objects"},
      {"rank count", [](json& j) { j["npu_count"] = 3; }, "",
       "bad.json: field \"npus\" is an array of 2 element(s); expected one entry per rank: npu_count = 3"},
      {"no ranks", [](json& j) { j["npu_count"] = 0; }, "",
       "bad.json: field \"npu_count\" is 0 (an integer); expected at least 1"},
      {"rank range", [](json& j) { j["npus"][1]["rank"] = 2; }, "",
       "bad.json: field \"npus[1].rank\" is 2 (an integer); expected a rank below npu_count"},
      {"npu entry", [](json& j) { j["npus"][0] = 7; }, "",
       "bad.json: field \"npus[0]\" is 7 (an integer); expected an object"},
      {"path category", [](json& j) { j["critical_path"]["categories"][1]["ns"] = 1.5; }, "",
       "bad.json: field \"critical_path.categories[1].ns\" is 1.5 (a number); expected a non-negative integer "
       "(nanoseconds)"},
      {"path type", [](json& j) { j["critical_path"] = "yes"; }, "",
       "bad.json: field \"critical_path\" is \"yes\" (a string); expected an object (from orrery run --critical-path)"},
      {"utilisation", [](json& j) { j["dims"][0]["utilization"] = "high"; }, "",
       "bad.json: field \"dims[0].utilization\" is \"high\" (a string); expected a non-negative number"},
      {"collective order", [](json& j) { j["collectives"][0]["end_ns"] = 50; }, "",
       "bad.json: field \"collectives[0].end_ns\" is 50 (an integer); expected at least start_ns = 100"},
      {"memory", [](json& j) { j.erase("memory"); }, "", "bad.json: field \"memory\" is missing; expected an object"},
      {"collective entry", [](json& j) { j["collectives"].push_back(7); }, "",
       "bad.json: field \"collectives[1]\" is 7 (an integer); expected an object with start_ns and end_ns"},
      {"collective time",
       [](json& j) {
         j["collectives"].push_back(j["collectives"][0]);
         j["collectives"][1].erase("start_ns");
       },
       "", "bad.json: field \"collectives[1].start_ns\" is missing; expected a non-negative integer (nanoseconds)"},
      {"totals type", [](json& j) { j["collective_totals"] = 5; }, "",
       "bad.json: field \"collective_totals\" is 5 (an integer); expected an object with count and duration_ns"},
      {"totals count",
       [](json& j) {
         j["collective_totals"] = {{"count", "3"}, {"duration_ns", 1}};
       },
       "", "bad.json: field \"collective_totals.count\" is \"3\" (a string); expected a non-negative integer"},
      {"totals time",
       [](json& j) {
         j["collective_totals"] = {{"count", 3}};
       },
       "",
       "bad.json: field \"collective_totals.duration_ns\" is missing; expected a non-negative integer (nanoseconds)"},
      {"hash",
       [](json& j) {
         j["config"] = {{"hash", 5}};
       },
       "", "bad.json: field \"config.hash\" is 5 (an integer); expected a string"},
  };
  for (const Case& c : cases) {
    if (c.change) {
      json j = HandReport();
      c.change(j);
      d.Write("bad.json", j.dump());
    } else {
      d.Write("bad.json", c.raw);
    }
    // The bad file second: the message names it, not the good one.
    auto r = CompareReports(CompareOptions{good, d.File("bad.json"), "text"});
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().message().rfind(d.File(c.want), 0), 0u) << c.name << ": " << r.status().message();
  }
  std::string out, err;
  EXPECT_EQ(testing::RunCliCapture("report compare " + d.File("bad.json") + " " + good, &out, &err), 2);
  EXPECT_EQ(err.rfind("orrery: " + d.File("bad.json") + ": field \"config.hash\""), 0u) << err;
  EXPECT_EQ(out, "");
  EXPECT_EQ(testing::RunCliCapture("report compare " + good + " " + d.File("none.json"), &out, &err), 2);
  EXPECT_NE(err.find(d.File("none.json") + ": cannot read it (No such file or directory)"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCliCapture("report compare " + good + " " + d.path(), &out, &err), 2);
  EXPECT_NE(err.find(d.path() + ": is a directory"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCliCapture("report compare " + good + " " + good + " --format=xml", &out, &err), 2);
  EXPECT_NE(err.find("--format = \"xml\": valid: text, json, csv"), std::string::npos) << err;
  EXPECT_EQ(testing::RunCliCapture("report compare " + good, &out, &err), 2);
  EXPECT_NE(err.find("B is required (in 'orrery report compare'"), std::string::npos) << err;
}

}  // namespace
}  // namespace orrery
