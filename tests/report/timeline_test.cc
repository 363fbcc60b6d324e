// The timeline (--timeline): a Chrome trace-event file read back with
// nlohmann-json and checked for what Perfetto needs: every event has name, ph,
// ts, pid and tid; spans have dur >= 0 and, on one track, nest or are disjoint
// and appear in time order; the rank selection and the window hold; flows pair
// up; the same inputs give the same bytes; bad flag values exit 2.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::MakeNode;
using testing::TempDir;
using Json = nlohmann::json;
using Nodes = std::vector<ChakraProtoMsg::Node>;

using orrery::testing::ReadFileText;

ChakraProtoMsg::Node Comp(uint64_t id, uint64_t us, std::vector<uint64_t> deps, const std::string& name) {
  auto n = MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(us);
  for (uint64_t p : deps) n.add_data_deps(p);
  n.set_name(name);
  return n;
}

ChakraProtoMsg::Node P2P(uint64_t id, bool send, int peer, uint64_t bytes, std::vector<uint64_t> deps) {
  auto n = MakeNode(id, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  testing::SetAttr(&n, send ? "comm_dst" : "comm_src", static_cast<uint64_t>(peer));
  testing::SetAttr(&n, "comm_size", bytes);
  testing::SetAttr(&n, "comm_tag", uint64_t{0});
  for (uint64_t p : deps) n.add_data_deps(p);
  return n;
}

// Four NPUs on Ring(4, 50 GB/s, 500 ns): a two-stage pipeline between ranks 0
// and 1 (rank 0 computes 10 us and sends 1 MiB, twice; rank 1 receives both,
// posted at 0, and computes 20 us after each), ranks 2 and 3 compute 5 us;
// then every rank joins a 1 KiB all-reduce.
// One message: trunc(500 + 1048576 / 53.6870912) = 20031 ns. Rank 1's first
// receive: [0, 30031] (the send starts at 10000); the second: rank 0's second
// send waits for the communication slot until 30031 and arrives at 50062, and the
// two receives overlap, so they take two receive lanes.
void WritePipeline(const TempDir& d) {
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 50));
  const uint64_t mib = 1048576;
  testing::WriteTraces(d, 4, [&](int r) {
    Nodes v;
    if (r == 0) {
      v = {Comp(1, 10, {}, "F0a"), P2P(2, true, 1, mib, {1}), Comp(3, 10, {1}, "F0b"), P2P(4, true, 1, mib, {3})};
    } else if (r == 1) {
      v = {P2P(1, false, 0, mib, {}), Comp(2, 20, {1}, "F1a"), P2P(3, false, 0, mib, {}), Comp(4, 20, {2, 3}, "F1b")};
    } else {
      v = {Comp(1, 5, {}, "idle_stage")};
    }
    auto ar = testing::CollNode(9, 0, 1024);
    ar.add_data_deps(v.back().id());
    ar.set_name("grad_ar");
    v.push_back(ar);
    return v;
  });
}

Result<RunReport> RunTl(const TempDir& d, const std::string& file, const std::string& ranks = "",
                        const std::string& window = "") {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.observe.timeline_path = d.File(file);
  c.observe.timeline_ranks = ranks;
  c.observe.timeline_window = window;
  return RunSimulation(c, DefaultBackends());
}

// Parses a timestamp of the file (microseconds) back to integer ns.
int64_t Ns(const Json& v) { return static_cast<int64_t>(v.get<double>() * 1000.0 + 0.5); }

// The checks every timeline must pass; returns the events.
Json CheckWellFormed(const std::string& path) {
  Json j = Json::parse(ReadFileText(path));
  EXPECT_TRUE(j.contains("traceEvents"));
  const Json& ev = j["traceEvents"];
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> tracks;
  for (const Json& e : ev) {
    for (const char* key : {"name", "ph", "ts", "pid", "tid"})
      EXPECT_TRUE(e.contains(key)) << key << " in " << e.dump();
    if (e["ph"] != "X") continue;
    EXPECT_TRUE(e.contains("dur"));
    EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    auto& spans = tracks[{e["pid"].get<int>(), e["tid"].get<int>()}];
    const int64_t ts = Ns(e["ts"]), end = ts + Ns(e["dur"]);
    if (!spans.empty()) {
      EXPECT_GE(ts, spans.back().first) << "time order on a track: " << e.dump();
    }
    spans.emplace_back(ts, end);
  }
  // On each track, any two spans nest or are disjoint.
  for (const auto& [track, spans] : tracks) {
    for (size_t a = 0; a < spans.size(); ++a) {
      for (size_t b = a + 1; b < spans.size(); ++b) {
        const auto [s1, e1] = spans[a];
        const auto [s2, e2] = spans[b];
        const bool disjoint = e1 <= s2 || e2 <= s1;
        const bool nested = (s1 <= s2 && e2 <= e1) || (s2 <= s1 && e1 <= e2);
        EXPECT_TRUE(disjoint || nested) << "pid " << track.first << " tid " << track.second;
      }
    }
  }
  return ev;
}

const Json* FindSpan(const Json& ev, int pid, const std::string& name, int nth = 0) {
  for (const Json& e : ev) {
    if (e["ph"] == "X" && e["pid"] == pid && e["name"] == name && nth-- == 0) return &e;
  }
  return nullptr;
}

TEST(Timeline, AllRanksWellFormedWithExactTimesLanesAndFlows) {
  TempDir d;
  WritePipeline(d);
  auto r = RunTl(d, "t.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Json ev = CheckWellFormed(d.File("t.json"));
  std::set<int> pids;
  for (const Json& e : ev) pids.insert(e["pid"].get<int>());
  EXPECT_EQ(pids, (std::set<int>{0, 1, 2, 3}));
  // Exact times (hand-derived above), printed as microseconds with three decimals.
  const Json* f0a = FindSpan(ev, 0, "F0a");
  ASSERT_NE(f0a, nullptr);
  EXPECT_EQ(Ns((*f0a)["ts"]), 0);
  EXPECT_EQ(Ns((*f0a)["dur"]), 10000);
  const Json* recv_a = FindSpan(ev, 1, "recv", 0);
  const Json* recv_b = FindSpan(ev, 1, "recv", 1);
  ASSERT_TRUE(recv_a && recv_b);
  EXPECT_EQ(Ns((*recv_a)["dur"]), 30031);
  EXPECT_EQ(Ns((*recv_b)["dur"]), 50062);
  EXPECT_NE((*recv_a)["tid"], (*recv_b)["tid"]);  // they overlap: two lanes
  EXPECT_NE(ReadFileText(d.File("t.json")).find("\"dur\":30.031,"), std::string::npos);
  const Json* send_b = FindSpan(ev, 0, "send", 1);
  ASSERT_NE(send_b, nullptr);
  EXPECT_EQ(Ns((*send_b)["ts"]), 30031);  // waited for the communication slot
  // The all-reduce carries its bytes, algorithm and type.
  const Json* ar = FindSpan(ev, 2, "grad_ar");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ((*ar)["args"]["bytes"], 1024);
  EXPECT_EQ((*ar)["args"]["type"], "ALL_REDUCE");
  EXPECT_EQ((*ar)["args"]["algorithm"], "ALL_REDUCE:ring");
  EXPECT_EQ((*ar)["tid"], 2);
  // Nested in it, on the same track: its one phase, on dim0, for the whole collective
  // (one chunk on a one-dimensional network).
  const Json* phase = FindSpan(ev, 2, "dim0");
  ASSERT_NE(phase, nullptr);
  EXPECT_EQ((*phase)["cat"], "phase");
  EXPECT_EQ((*phase)["tid"], 2);
  EXPECT_EQ(Ns((*phase)["ts"]), Ns((*ar)["ts"]));
  EXPECT_EQ(Ns((*phase)["dur"]), Ns((*ar)["dur"]));
  // Two messages, two flows from rank 0 to rank 1, each 's' no later than its 'f'.
  std::map<int, std::pair<const Json*, const Json*>> flows;
  for (const Json& e : ev) {
    if (e["ph"] == "s") flows[e["id"].get<int>()].first = &e;
    if (e["ph"] == "f") flows[e["id"].get<int>()].second = &e;
  }
  ASSERT_EQ(flows.size(), 2u);
  for (const auto& [id, sf] : flows) {
    ASSERT_TRUE(sf.first && sf.second) << id;
    EXPECT_EQ((*sf.first)["pid"], 0);
    EXPECT_EQ((*sf.second)["pid"], 1);
    EXPECT_LE(Ns((*sf.first)["ts"]), Ns((*sf.second)["ts"]));
  }
  // Same inputs, same bytes.
  ASSERT_TRUE(RunTl(d, "t2.json").ok());
  EXPECT_EQ(ReadFileText(d.File("t.json")), ReadFileText(d.File("t2.json")));
}

TEST(Timeline, RankSelectionAndWindowLimitWhatIsWritten) {
  TempDir d;
  WritePipeline(d);
  ASSERT_TRUE(RunTl(d, "sel.json", "1-2").ok());
  const Json ev = CheckWellFormed(d.File("sel.json"));
  std::set<int> pids;
  int flows = 0;
  for (const Json& e : ev) {
    pids.insert(e["pid"].get<int>());
    flows += e["ph"] == "s" || e["ph"] == "f";
  }
  EXPECT_EQ(pids, (std::set<int>{1, 2}));
  EXPECT_EQ(flows, 0);  // the sender, rank 0, is not shown
  ASSERT_TRUE(RunTl(d, "win.json", "", "35000-40000").ok());
  const Json w = CheckWellFormed(d.File("win.json"));
  int spans = 0;
  for (const Json& e : w) {
    if (e["ph"] != "X" || e["cat"] == "phase") continue;
    ++spans;
    EXPECT_GE(Ns(e["ts"]) + Ns(e["dur"]), 35000) << e.dump();
    EXPECT_LE(Ns(e["ts"]), 40000) << e.dump();
  }
  // In [35000, 40000]: F1a [30031, 50031], send b [30031, 50062], recv b [0, 50062],
  // and the all-reduce of ranks 2 and 3, which joined at 5000 and wait for rank 1 (70062).
  EXPECT_EQ(spans, 5);
}

TEST(Timeline, SymmetricRunWritesTheRepresentativeForEachSelectedRank) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 50));
  testing::WriteTraces(d, 8, [](int) {
    auto ar = testing::CollNode(2, 0, 4096);
    ar.add_data_deps(1);
    return Nodes{Comp(1, 3, {}, "fwd"), ar};
  });
  auto r = RunTl(d, "sym.json", "0,5-6");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->symmetric);
  const Json ev = CheckWellFormed(d.File("sym.json"));
  std::map<int, int> spans;
  for (const Json& e : ev) {
    if (e["ph"] == "X") ++spans[e["pid"].get<int>()];
  }
  // fwd, the all-reduce, and inside it its one phase (dim0, the whole collective).
  EXPECT_EQ(spans, (std::map<int, int>{{0, 3}, {5, 3}, {6, 3}}));
}

// One 1 MiB all-reduce, one chunk, on Ring(2, 50 GB/s) x Ring(2, 25 GB/s),
// baseline: dim0 for 52015 ns, then dim1 for 71547 ns (the phase times derived in
// tests/critical_path_test.cc, CollectiveIsSplitByTheDimensionItsChunksAreOn):
// two phase spans nested in the collective's, back to back.
TEST(Timeline, PhasesNestInTheCollectiveByDimension) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Ring ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 500 ]\n");
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "endpoint-delay": 10, "local-mem-bw": 50,
                             "all-reduce-implementation": ["ring", "ring"]})");
  testing::WriteTraces(d, 4, [](int) {
    auto ar = testing::CollNode(1, 0, 1048576);
    ar.set_name("ar");
    return Nodes{ar};
  });
  ASSERT_TRUE(RunTl(d, "ph.json", "1").ok());
  const Json ev = CheckWellFormed(d.File("ph.json"));
  const Json* ar = FindSpan(ev, 1, "ar");
  const Json* dim0 = FindSpan(ev, 1, "dim0");
  const Json* dim1 = FindSpan(ev, 1, "dim1");
  ASSERT_TRUE(ar && dim0 && dim1);
  EXPECT_EQ(Ns((*ar)["ts"]), 0);
  EXPECT_EQ(Ns((*ar)["dur"]), 52015 + 71547);
  EXPECT_EQ(Ns((*dim0)["ts"]), 0);
  EXPECT_EQ(Ns((*dim0)["dur"]), 52015);
  EXPECT_EQ(Ns((*dim1)["ts"]), 52015);
  EXPECT_EQ(Ns((*dim1)["dur"]), 71547);
}

// A run that fails (rank 1 waits for a message rank 0 never sends) leaves no half timeline.
TEST(Timeline, FailedRunLeavesNoFile) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  testing::WriteTraces(d, 2,
                       [](int r) { return r == 0 ? Nodes{Comp(1, 1, {}, "c")} : Nodes{P2P(1, false, 0, 1024, {})}; });
  auto r = RunTl(d, "dead.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().message();
  EXPECT_FALSE(std::ifstream(d.File("dead.json")).good());
}

TEST(Timeline, BadFlagValuesExitTwoNamingFlagValueAndAllowed) {
  TempDir d;
  WritePipeline(d);
  const std::string base = "run --workload-configuration=" + d.File("trace") +
                           " --system-configuration=" + d.File("system.json") +
                           " --network-configuration=" + d.File("network.yml");
  const std::string in = base + " --timeline=" + d.File("x.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {in + " --timeline-ranks=7-3",
       "--timeline-ranks = \"7-3\": range 7-3 runs backwards; allowed: ranks and ranges A-B (A <= B) separated by "
       "commas, each 0..3 (the network has 4 NPUs)"},
      {in + " --timeline-ranks=0,4", "--timeline-ranks = \"0,4\": rank 4 is beyond the last NPU; allowed:"},
      {in + " --timeline-ranks=0,,1", "--timeline-ranks = \"0,,1\": \"\" is not a rank or a range; allowed:"},
      {in + " --timeline-ranks=a", "--timeline-ranks = \"a\": \"a\" is not a rank or a range; allowed:"},
      {in + " --timeline-window=500-20",
       "--timeline-window = \"500-20\": ends before it starts; allowed: "
       "START_NS-END_NS, two integers in ns with START_NS <= END_NS"},
      {in + " --timeline-window=500", "--timeline-window = \"500\": no '-'; allowed:"},
      {base + " --timeline=/nonexistent-dir/t.json",
       "--timeline = \"/nonexistent-dir/t.json\": cannot write it (No such file or directory); allowed: a file path "
       "in an existing, writable directory"},
      {"run --example=default --timeline-ranks=0",
       "--timeline-ranks selects what --timeline=FILE writes; give --timeline too"},
  };
  for (const auto& [args, message] : cases) {
    std::string err;
    EXPECT_EQ(testing::RunCli(args, &err), 2) << args << "\n" << err;
    EXPECT_NE(err.find(message), std::string::npos) << args << "\n" << err;
  }
}

}  // namespace
}  // namespace orrery
