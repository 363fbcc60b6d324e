// Communicator groups from the traces' own process-group metadata
// (workload/trace_groups.h; docs/formats.md, "Process groups"), and rooted
// collectives without a root.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tick.h"
#include "core/units.h"
#include "run/run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

// The METADATA node Chakra's converter writes: the table as JSON in a Python list of one string.
ChakraProtoMsg::Node PgNode(uint64_t id, const std::string& table) {
  ChakraProtoMsg::Node n = testing::MakeNode(id, ChakraProtoMsg::METADATA_NODE);
  n.set_name("## process_group:init ##");
  n.mutable_inputs()->set_values("['" + table + "']");
  return n;
}

// One collective per rank in `ranks` (pg_name `pg`, after the metadata node); other ranks compute 7 us.
struct RankWork {
  std::vector<int> ranks;
  int comm_type;
  uint64_t bytes;
  std::string pg;
};

void WriteGroupTraces(const TempDir& d, int npus, const std::function<std::string(int)>& table_of,
                      const std::vector<RankWork>& work) {
  testing::WriteTraces(d, npus, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    const std::string table = table_of(r);
    if (!table.empty()) nodes.push_back(PgNode(0, table));
    for (const RankWork& w : work) {
      if (std::find(w.ranks.begin(), w.ranks.end(), r) == w.ranks.end()) continue;
      auto n = testing::CollNode(nodes.size(), w.comm_type, w.bytes);
      testing::SetAttr(&n, "pg_name", w.pg);
      nodes.push_back(n);
    }
    if (nodes.size() <= 1) {
      auto c = testing::MakeNode(nodes.size(), ChakraProtoMsg::COMP_NODE);
      c.set_duration_micros(7);
      nodes.push_back(c);
    }
    return nodes;
  });
}

const char* kSystem = R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
  "collective-optimization": "localBWAware", "all-reduce-implementation": ["ring", "ring"]})";

// Ring x Ring: dim 0 at 100 GB/s, 500 ns; dim 1 at 50 GB/s, 1000 ns.
std::string Net(int dim0) {
  return "topology: [ Ring, Ring ]\nnpus_count: [ " + std::to_string(dim0) +
         ", 2 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n";
}

// A ring all-reduce of S bytes over the 2 NPUs of dim 1: reduce-scatter then
// all-gather, one step each of S/2 bytes, and one reduction of S/2 (three accesses at 1600 B/ns).
Tick Dim1AllReduce(uint64_t S) {
  const double bw = GiBpsToBytesPerNs(50);
  const Tick ed = 10;
  const Tick step = T(1000 + (S / 2) / bw) + ed;
  return ed + 2 * step + 3 * T((S / 2) / 1600.0);
}

Result<RunReport> RunGroups(const TempDir& d, const std::string& groups_file = "") {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = groups_file;
  return RunSimulation(c, DefaultBackends());
}

const char* kTable4 = R"([{"pg_name": "0", "ranks": [], "group_size": 4}, {"pg_name": "1", "ranks": [1, 3]}, )"
                      R"({"pg_name": "2", "ranks": [0, 2], "group_size": 2}])";

// Groups {1, 3} and {0, 2} from the trace alone: each all-reduce runs over its
// own two ranks, along dimension 1 (ranks r and r + 2), at its own size.
TEST(TraceProcessGroups, FourRanksRunEachCollectiveOnItsGroup) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  const uint64_t S1 = 1 << 20, S2 = 3 << 20;
  WriteGroupTraces(d, 4, [](int) { return kTable4; }, {{{1, 3}, 0, S1, "1"}, {{0, 2}, 0, S2, "2"}});
  auto r = RunGroups(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, Dim1AllReduce(S2));
  EXPECT_EQ(r->per_npu[2].finished_ns, Dim1AllReduce(S2));
  EXPECT_EQ(r->per_npu[1].finished_ns, Dim1AllReduce(S1));
  EXPECT_EQ(r->per_npu[3].finished_ns, Dim1AllReduce(S1));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "communicator groups: 3 from the traces' process-group metadata (" + d.File("trace.0.et") +
                             " node 0, the same in every rank's trace)");
  // The same groups from ASTRA-sim's comm-group JSON give the same run.
  d.Write("groups.json", R"({"0": [0, 1, 2, 3], "1": [1, 3], "2": [0, 2]})");
  auto f = RunGroups(d, d.File("groups.json"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(f->per_npu[rank].finished_ns, r->per_npu[rank].finished_ns);
}

// Six ranks (3 x 2); the two groups {1, 4} and {2, 5} leave rank 0 out: ranks 0
// and 3 only compute, the others all-reduce over their group from the trace alone.
TEST(TraceProcessGroups, TwoGroupsWithoutRankZero) {
  TempDir d;
  d.Write("network.yml", Net(3));
  d.Write("system.json", kSystem);
  const uint64_t S = 1 << 20;
  const std::string table = R"([{"pg_name": "1", "ranks": [1, 4]}, {"pg_name": "2", "ranks": [2, 5]}])";
  WriteGroupTraces(d, 6, [&](int) { return table; }, {{{1, 4}, 0, S, "1"}, {{2, 5}, 0, 2 * S, "2"}});
  auto r = RunGroups(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 7000u);
  EXPECT_EQ(r->per_npu[3].finished_ns, 7000u);
  EXPECT_EQ(r->per_npu[1].finished_ns, Dim1AllReduce(S));
  EXPECT_EQ(r->per_npu[4].finished_ns, Dim1AllReduce(S));
  EXPECT_EQ(r->per_npu[2].finished_ns, Dim1AllReduce(2 * S));
  EXPECT_EQ(r->per_npu[5].finished_ns, Dim1AllReduce(2 * S));
}

std::string Failure(const Result<RunReport>& r) { return r.ok() ? "(ran)" : r.status().message(); }

TEST(TraceProcessGroups, EveryRanksTableMustAgree) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  const std::string other = R"([{"pg_name": "0", "ranks": []}, {"pg_name": "1", "ranks": [1, 2]}, )"
                            R"({"pg_name": "2", "ranks": [0, 2]}])";
  WriteGroupTraces(d, 4, [&](int r) { return r == 2 ? other : kTable4; }, {{{1, 3}, 0, 1024, "1"}});
  EXPECT_EQ(Failure(RunGroups(d)),
            d.File("trace.2.et") + " (rank 2): process group \"1\" is [1, 2] here but [1, 3] in " +
                d.File("trace.0.et") + " node 0 (rank 0); every rank's trace must describe the same process groups");
  WriteGroupTraces(d, 4, [&](int r) { return r == 3 ? "" : kTable4; }, {{{1, 3}, 0, 1024, "1"}});
  EXPECT_EQ(Failure(RunGroups(d)),
            d.File("trace.3.et") + " (rank 3) has no process-group metadata (## process_group:init ##), but " +
                d.File("trace.0.et") + " (rank 0) has; every rank's trace must describe the same process groups");
}

TEST(TraceProcessGroups, GroupsMustFitTheNetwork) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  WriteGroupTraces(d, 4, [](int) { return R"([{"pg_name": "1", "ranks": [1, 4]}])"; }, {});
  EXPECT_EQ(Failure(RunGroups(d)),
            d.File("trace.0.et") +
                ": node 0 (rank 0): process group \"1\" lists rank 4, outside the network's ranks 0..3");
  WriteGroupTraces(d, 4, [](int) { return R"([{"pg_name": "0", "ranks": [], "group_size": 8}])"; }, {});
  EXPECT_EQ(Failure(RunGroups(d)),
            d.File("trace.0.et") +
                ": node 0 (rank 0): process group \"0\" is every rank (ranks []) of a 8-rank job "
                "(group_size 8), but the network has 4 NPU(s); simulate the whole job: a network of "
                "8 NPUs and every rank's trace");
  WriteGroupTraces(d, 4, [](int) { return R"([{"pg_name": "1", "ranks": [1, 3, 1]}])"; }, {});
  EXPECT_EQ(Failure(RunGroups(d)), d.File("trace.0.et") + ": node 0 (rank 0): process group \"1\" lists rank 1 twice");
  WriteGroupTraces(d, 4, [](int) { return R"([{"pg_name": "1", "ranks": [1, 3], "group_size": 3}])"; }, {});
  EXPECT_EQ(Failure(RunGroups(d)),
            d.File("trace.0.et") + ": node 0 (rank 0): process group \"1\" lists 2 rank(s) but its group_size is 3");
}

// Without any group a pg_name would have run over every NPU: now an error naming node, rank and group.
TEST(TraceProcessGroups, APgNameWithoutAnyGroupIsAnError) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  const std::string none =
      ": pg_name \"1\" names a process group, but none is defined: the traces define no process group (no METADATA "
      "node \"## process_group:init ##\", or one whose table is empty) and no --comm-group-configuration is given; "
      "give the groups (ASTRA-sim's comm-group JSON) or drop the attribute to run over every NPU";
  WriteGroupTraces(d, 4, [](int) { return ""; }, {{{0, 1, 2, 3}, 0, 1024, "1"}});
  EXPECT_EQ(Failure(RunGroups(d)), d.File("trace.0.et") + ": node 0 (rank 0)" + none);
  // Found by fuzzing process_groups: a table that lists no group ("[]") was
  // reported as no table at all ("the traces have no process-group metadata").
  WriteGroupTraces(d, 4, [](int) { return "[]"; }, {{{0, 1, 2, 3}, 0, 1024, "1"}});
  EXPECT_EQ(Failure(RunGroups(d)), d.File("trace.0.et") + ": node 1 (rank 0)" + none);
  WriteGroupTraces(d, 4, [](int) { return kTable4; }, {{{0, 1, 2, 3}, 0, 1024, "9"}});
  EXPECT_EQ(Failure(RunGroups(d)),
            d.File("trace.0.et") +
                ": node 1 (rank 0): pg_name \"9\" is not in the communicator group configuration "
                "(groups: \"0\", \"1\", \"2\")");
}

// --comm-group-configuration overrides the traces' table, and the report says so.
TEST(TraceProcessGroups, TheGroupFileOverridesTheTraces) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  const uint64_t S = 1 << 20;
  WriteGroupTraces(d, 4, [](int) { return R"([{"pg_name": "1", "ranks": [0, 1]}])"; }, {{{1, 3}, 0, S, "1"}});
  EXPECT_NE(Failure(RunGroups(d)).find("is not a member"), std::string::npos);  // the trace's group has no rank 3
  d.Write("groups.json", R"({"1": [1, 3]})");
  auto r = RunGroups(d, d.File("groups.json"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[1].finished_ns, Dim1AllReduce(S));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "communicator groups: 1 from --comm-group-configuration " + d.File("groups.json") +
                             "; it overrides the traces' process-group metadata (1 group(s), " + d.File("trace.0.et") +
                             " node 0)");
}

// A comm-group file that lists a group's ranks out of order: ASTRA-sim runs the
// ring in that order, Orrery in ascending order, and the report says so.
TEST(TraceProcessGroups, AGroupListedOutOfOrderIsNoted) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  const uint64_t S = 1 << 20;
  WriteGroupTraces(d, 4, [](int) { return ""; }, {{{1, 3}, 0, S, "1"}, {{0, 2}, 0, S, "2"}});
  d.Write("groups.json", R"({"1": [3, 1], "2": [0, 2]})");
  auto r = RunGroups(d, d.File("groups.json"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[1].finished_ns, Dim1AllReduce(S));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0],
            "communicator groups: group \"1\" lists its ranks out of order (3, 1); Orrery's flat ring runs a group's "
            "ranks in ascending order, ASTRA-sim in the listed order");
  d.Write("groups.json", R"({"1": [1, 3], "2": [0, 2]})");
  auto sorted = RunGroups(d, d.File("groups.json"));
  ASSERT_TRUE(sorted.ok()) << sorted.status().message();
  EXPECT_TRUE(sorted->notes.empty());
  // The listing order changes neither the times nor how the rank classes see the group.
  EXPECT_EQ(r->rank_classes, sorted->rank_classes) << r->symmetry_note;
  EXPECT_EQ(r->symmetry_note, sorted->symmetry_note);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(r->per_npu[rank].finished_ns, sorted->per_npu[rank].finished_ns);
}

// A broadcast without 'root' (converters write none) starts at its group's
// first rank: in group {1, 3}, rank 1, exactly as with root = 1 given.
TEST(RootedWithoutRoot, TheGroupsFirstRankIsTheRoot) {
  TempDir d;
  d.Write("network.yml", Net(2));
  d.Write("system.json", kSystem);
  const std::string table = R"([{"pg_name": "1", "ranks": [1, 3]}])";
  WriteGroupTraces(d, 4, [&](int) { return table; }, {{{1, 3}, 5, 1 << 20, "1"}});
  auto rootless = RunGroups(d);
  ASSERT_TRUE(rootless.ok()) << rootless.status().message();
  ASSERT_EQ(rootless->notes.size(), 2u);
  EXPECT_EQ(rootless->notes[1],
            "2 rooted collective(s) on the simulated ranks give no 'root' (nor 'comm_src'): each is rooted at the "
            "first rank of its group (rank 1 node 1: BROADCAST over group \"1\", root 1)");
  testing::WriteTraces(d, 4, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes{PgNode(0, table)};
    if (r == 1 || r == 3) {
      auto n = testing::CollNode(1, 5, 1 << 20);
      testing::SetAttr(&n, "pg_name", std::string("1"));
      testing::SetAttr(&n, "root", uint64_t{1});
      nodes.push_back(n);
    }
    return nodes;
  });
  auto rooted = RunGroups(d);
  ASSERT_TRUE(rooted.ok()) << rooted.status().message();
  for (int rank : {1, 3}) EXPECT_EQ(rootless->per_npu[rank].finished_ns, rooted->per_npu[rank].finished_ns) << rank;
  EXPECT_GT(rooted->per_npu[3].finished_ns, 0u);
}

}  // namespace
}  // namespace orrery
