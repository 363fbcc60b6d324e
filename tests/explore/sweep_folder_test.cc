// A sweep's output folder never loses a finished row (issue 31): one sweep
// at a time per output, rows of another spec are not dropped, a resume's
// rewrite is whole or not at all, a failed append leaves whole lines, and
// `sweep merge` refuses mixed specs and incomplete shard sets. Also what a
// sweep spec must not accept silently: gen.* paths on a traces base, a
// missing comm-groups file, CSV columns out of the header's order.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "explore/sweep.h"
#include "explore/sweep_folder.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery::sweep {
namespace {

using orrery::testing::ReadFileText;
using orrery::testing::TempDir;

const char kSystem[] =
    R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
        "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
        "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
        "collective-optimization": "localBWAware", "local-mem-bw": 50})";

// A traces base (4 ranks of a small data-parallel loop) and `rest` (axes, points, filters).
void WriteSpec(const TempDir& d, const std::string& name, const std::string& rest, const std::string& base_extra = "") {
  DataParallelSpec dp;
  dp.npus = 4;
  dp.layers = 2;
  ASSERT_TRUE(WriteDataParallelTraces(dp, d.File("t")).ok());
  d.Write("sys.json", kSystem);
  d.Write(name, "base:\n  network: \"Ring(4,50GB/s,500ns)\"\n  system: sys.json\n  workload: t\n" + base_extra + rest);
}

const char kAxes[] =
    "axes:\n  network.dim0.bandwidth_gbps: [10, 20, 30, 40]\n  system.preferred-dataset-splits: [2, 4]\n";

Result<Summary> Sweep(const TempDir& d, const std::string& spec_name, const std::string& out, int shard = 0,
                      int shards = 1) {
  auto spec = ReadSweepSpec(d.File(spec_name));
  if (!spec.ok()) return spec.status();
  Options o;
  o.jobs = 2;
  o.out_dir = d.File(out);
  o.shard_index = shard;
  o.shard_count = shards;
  std::string dry;
  return RunSweep(spec.value(), o, &dry);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  for (size_t nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1)
    lines.push_back(text.substr(pos, nl - pos));
  return lines;
}

// Writes past `bytes` fail (EFBIG) as on a full disk, in this process, while this lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_);
  }

 private:
  rlimit saved_{};
  void (*old_)(int) = nullptr;
};

TEST(SweepFolder, ASecondSweepOnTheSameOutputExitsOne) {
  TempDir d;
  WriteSpec(d, "a.yml", kAxes);
  std::filesystem::create_directories(d.File("out"));
  auto held = FolderLock::Take(d.File("out"), "sweep.jsonl.lock", false);  // another sweep, running
  ASSERT_TRUE(held.ok()) << held.status().message();
  auto second = Sweep(d, "a.yml", "out");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().exit_code(), 1);
  EXPECT_EQ(second.status().message(),
            d.File("out") + ": in use by another orrery sweep (pid " + std::to_string(getpid()) + "), which holds " +
                d.File("out") + "/sweep.jsonl.lock; wait for it to finish, or give this sweep another --out");
  EXPECT_FALSE(std::filesystem::exists(d.File("out/sweep.jsonl")));
  // Another shard of the same sweep is another output: it runs beside it.
  auto shard = Sweep(d, "a.yml", "out", 0, 2);
  EXPECT_TRUE(shard.ok()) << shard.status().message();
}

// Once, a sweep of another spec on the same --out deleted the first one's rows.
TEST(SweepFolder, AnotherSpecOnTheSameOutputIsRefusedAndTheRowsStay) {
  TempDir d;
  WriteSpec(d, "a.yml", kAxes);
  d.Write("b.yml", ReadFileText(d.File("a.yml")) + "  run.iterations: [2]\n");
  ASSERT_TRUE(Sweep(d, "a.yml", "out").ok());
  const std::string rows = ReadFileText(d.File("out/sweep.jsonl"));
  auto other = Sweep(d, "b.yml", "out");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().exit_code(), 2);
  const std::string& m = other.status().message();
  EXPECT_NE(m.find(d.File("out") + " holds the rows of another sweep: " + d.File("out") + "/sweep.id names spec " +
                   d.File("a.yml") + " (identity "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("and this sweep is spec " + d.File("b.yml") + " (identity "), std::string::npos) << m;
  EXPECT_NE(m.find("give this sweep another --out"), std::string::npos) << m;
  EXPECT_EQ(ReadFileText(d.File("out/sweep.jsonl")), rows);
  // A filter added later is the same sweep: it resumes (docs/sweeps.md).
  d.Write("c.yml", ReadFileText(d.File("a.yml")) + "filters: [\"network.dim0.bandwidth_gbps > 15\"]\n");
  auto filtered = Sweep(d, "c.yml", "out");
  ASSERT_TRUE(filtered.ok()) << filtered.status().message();
  EXPECT_EQ(filtered->ran, 0u);
  EXPECT_EQ(filtered->skipped, 6u);
}

// Once, a resume truncated the log and wrote it again: a write error kept a
// fraction of the finished rows. The rewrite (a torn last line to drop) now
// goes through a temporary file: it fails whole, and every row stays.
TEST(SweepFolder, AResumeWhoseRewriteFailsKeepsEveryRow) {
  TempDir d;
  WriteSpec(d, "a.yml", kAxes);
  ASSERT_TRUE(Sweep(d, "a.yml", "full").ok());
  const std::string full = ReadFileText(d.File("full/sweep.jsonl"));
  std::filesystem::create_directories(d.File("out"));
  const std::string torn = full.substr(0, full.size() - 40);  // 7 rows and most of the 8th
  d.Write("out/sweep.jsonl", torn);
  Result<Summary> failed = Status::Ok();
  {
    FileSizeLimit limit(torn.size() / 2);
    failed = Sweep(d, "a.yml", "out");
  }
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().exit_code(), 1);
  EXPECT_EQ(failed.status().message(),
            d.File("out/sweep.jsonl") + ": writing it failed (File too large); the file is left as it was");
  EXPECT_EQ(ReadFileText(d.File("out/sweep.jsonl")), torn);
  // Resumed with room: the torn row is reported and redone, nothing else runs again.
  auto resumed = Sweep(d, "a.yml", "out");
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->skipped, 7u);
  EXPECT_EQ(resumed->ran, 1u);
  ASSERT_EQ(resumed->notes.size(), 1u);
  EXPECT_EQ(resumed->notes[0],
            d.File("out/sweep.jsonl") + ": its last line was cut off (" +
                std::to_string(Lines(full).back().size() + 1 - 40) +
                " bytes: a run killed while writing it) and is dropped; its point runs again unless a "
                "whole row has it");
  EXPECT_EQ(ReadFileText(d.File("out/sweep.jsonl")), full);
}

// A full disk while rows are appended: the log keeps whole lines only, the
// sweep exits 1 saying how far it got, and a resume finishes the table.
TEST(SweepFolder, AFailedAppendLeavesWholeLinesAndTheSweepResumes) {
  TempDir d;
  WriteSpec(d, "a.yml", kAxes);
  ASSERT_TRUE(Sweep(d, "a.yml", "full").ok());
  const std::string full = ReadFileText(d.File("full/sweep.jsonl"));
  Result<Summary> failed = Status::Ok();
  {
    FileSizeLimit limit(full.size() / 3);
    failed = Sweep(d, "a.yml", "out");
  }
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().exit_code(), 1);
  EXPECT_NE(failed.status().message().find(d.File("out/sweep.jsonl") +
                                           ": appending a row failed (File too large); the sweep stopped ("),
            std::string::npos)
      << failed.status().message();
  const std::string kept = ReadFileText(d.File("out/sweep.jsonl"));
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.back(), '\n');
  for (const std::string& line : Lines(kept)) EXPECT_NE(full.find(line + "\n"), std::string::npos) << line;
  auto resumed = Sweep(d, "a.yml", "out");
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->skipped, Lines(kept).size());
  EXPECT_EQ(ReadFileText(d.File("out/sweep.jsonl")), full);
  EXPECT_EQ(ReadFileText(d.File("out/sweep.csv")), ReadFileText(d.File("full/sweep.csv")));
}

TEST(SweepFolder, MergeRefusesMixedSpecsAndIncompleteShardSets) {
  TempDir d;
  WriteSpec(d, "a.yml", kAxes);
  d.Write("b.yml", ReadFileText(d.File("a.yml")) + "  run.iterations: [2]\n");
  ASSERT_TRUE(Sweep(d, "a.yml", "m", 0, 3).ok());
  // One shard of three: refused, saying which are missing; --partial merges it and says so.
  auto one = MergeShards(d.File("m"));
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().exit_code(), 2);
  EXPECT_EQ(one.status().message(), d.File("m") +
                                        ": the shards are incomplete: shard(s) 2, 3 of 3 missing (no "
                                        "sweep.shard-2-of-3.jsonl, ...); run what is missing (a finished shard reruns "
                                        "in seconds doing nothing), or give --partial to merge what is there");
  auto partial = MergeShards(d.File("m"), MergeOptions{true});
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  EXPECT_EQ(partial->points, 3u);
  EXPECT_EQ(partial->missing, 5u);
  ASSERT_EQ(partial->notes.size(), 1u);
  EXPECT_EQ(partial->notes[0],
            "--partial: merged what is there: shard(s) 2, 3 of 3 missing (no "
            "sweep.shard-2-of-3.jsonl, ...); 5 points missing");
  // A shard of another spec, written elsewhere and copied in: refused, both named.
  ASSERT_TRUE(Sweep(d, "b.yml", "other", 1, 3).ok());
  for (const char* ext : {".jsonl", ".id"}) {
    std::filesystem::copy_file(d.File(std::string("other/sweep.shard-2-of-3") + ext),
                               d.File(std::string("m/sweep.shard-2-of-3") + ext));
  }
  EXPECT_FALSE(Sweep(d, "a.yml", "m", 2, 3).ok());  // the folder holds b's shard now: refused
  auto mixed = MergeShards(d.File("m"), MergeOptions{true});
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().exit_code(), 2);
  EXPECT_NE(mixed.status().message().find(
                "sweep.shard-1-of-3 and sweep.shard-2-of-3 come from different sweeps: spec " + d.File("a.yml") +
                " (identity "),
            std::string::npos)
      << mixed.status().message();
  EXPECT_NE(mixed.status().message().find("spec " + d.File("b.yml")), std::string::npos) << mixed.status().message();
}

// Found by fuzzing (sweep_rows): a STEM.id's counts were cast unchecked, so
// "rows": -1 became 2^64-1 in merge's messages and "points": 1e300 was
// undefined behaviour. Each is refused, naming the file and the key.
TEST(SweepFolder, AnIdentityWithCountsOutOfRangeIsRefused) {
  TempDir d;
  const std::string head = R"({"identity": "0123456789abcdef", "spec": "s.yml", "axis_paths": [], )";
  const std::pair<std::string, std::string> cases[] = {
      {R"("points": 1e300, "rows": 1)",
       "points = 1e+300: out of range; allowed: an integer >= 0 and "
       "<= 10000000"},
      {R"("points": 4, "rows": -1)", "rows = -1: negative; allowed: an integer >= 0 and <= 10000000"},
      {R"("points": 2.5, "rows": 1)", "points = 2.5: not an integer"},
      {R"("points": "4", "rows": 1)", "points = \"4\": not a number"},
  };
  for (const auto& [counts, want] : cases) {
    d.Write("sweep.shard-1-of-2.id", head + counts + R"(, "shard": "1/2", "merged": false})");
    d.Write("sweep.shard-1-of-2.jsonl", "");
    auto id = ReadIdentity(d.File("sweep.shard-1-of-2.id"));
    ASSERT_FALSE(id.ok()) << counts;
    EXPECT_EQ(id.status().exit_code(), 2);
    EXPECT_NE(id.status().message().find(d.File("sweep.shard-1-of-2.id") + ": not a sweep folder's identity (" + want),
              std::string::npos)
        << id.status().message();
    auto merged = MergeShards(d.path(), MergeOptions{true});
    ASSERT_FALSE(merged.ok()) << counts;
    EXPECT_NE(merged.status().message().find(want), std::string::npos) << merged.status().message();
  }
}

TEST(SweepFolder, MergeRefusesAShardStillRunningAndAnotherSplit) {
  TempDir d;
  WriteSpec(d, "a.yml", kAxes);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Sweep(d, "a.yml", "m", i, 2).ok());
  {
    auto running = FolderLock::Take(d.File("m"), "sweep.shard-2-of-2.jsonl.lock", false);
    ASSERT_TRUE(running.ok());
    auto merged = MergeShards(d.File("m"));
    ASSERT_FALSE(merged.ok());
    EXPECT_EQ(merged.status().exit_code(), 1);
    EXPECT_NE(merged.status().message().find("in use by another orrery sweep"), std::string::npos);
  }
  ASSERT_TRUE(Sweep(d, "a.yml", "m", 0, 3).ok());
  auto split = MergeShards(d.File("m"));
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("split the points differently (2 and 3 shards)"), std::string::npos)
      << split.status().message();
  std::filesystem::remove(d.File("m/sweep.shard-1-of-3.jsonl"));
  // A shard without its .id (copied alone, or written before ids existed) may be of any spec: refused.
  std::filesystem::rename(d.File("m/sweep.shard-2-of-2.id"), d.File("m/kept.id"));
  auto unknown = MergeShards(d.File("m"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            d.File("m") +
                "/sweep.shard-2-of-2.jsonl has no sweep.shard-2-of-2.id: which sweep its rows belong to is "
                "not known, so it cannot be merged safely; run that shard again (it keeps its rows, runs "
                "what is missing and writes the .id)");
  std::filesystem::rename(d.File("m/kept.id"), d.File("m/sweep.shard-2-of-2.id"));
  auto whole = MergeShards(d.File("m"));
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(whole->points, 8u);
  EXPECT_TRUE(whole->notes.empty());
}

// Once, a `points:` sweep wrote each row's values in its point's own order.
TEST(SweepFolder, ExplicitPointsGoUnderTheirColumns) {
  TempDir d;
  WriteSpec(d, "p.yml",
            "points:\n  - {network.dim0.bandwidth_gbps: 10, system.preferred-dataset-splits: 2}\n"
            "  - {system.preferred-dataset-splits: 4, network.dim0.bandwidth_gbps: 20}\n"
            "  - {network.dim0.bandwidth_gbps: 30}\n");
  ASSERT_TRUE(Sweep(d, "p.yml", "out").ok());
  const std::vector<std::string> csv = Lines(ReadFileText(d.File("out/sweep.csv")));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0].rfind("index,network.dim0.bandwidth_gbps,system.preferred-dataset-splits,hash,", 0), 0u) << csv[0];
  EXPECT_EQ(csv[1].rfind("0,10,2,", 0), 0u) << csv[1];
  EXPECT_EQ(csv[2].rfind("1,20,4,", 0), 0u) << csv[2];
  EXPECT_EQ(csv[3].rfind("2,30,,", 0), 0u) << csv[3];
  for (const std::string& line : csv) EXPECT_EQ(std::count(line.begin(), line.end(), ','), 19) << line;
}

TEST(SweepFolder, SpecsThatWouldFailEveryPointOrChangeNothingAreRefused) {
  TempDir d;
  WriteSpec(d, "g.yml", "axes:\n  network.dim0.bandwidth_gbps: [10]\n  gen.tp: [1, 2]\n");
  auto gen = ReadSweepSpec(d.File("g.yml"));
  ASSERT_FALSE(gen.ok());
  EXPECT_EQ(gen.status().exit_code(), 2);
  EXPECT_EQ(gen.status().message(), d.File("g.yml") + ":7: gen.tp: the base reads traces (base.workload = \"" +
                                        d.File("t") +
                                        "\"), which no gen.* value changes; allowed: network.*, system.* and run.* "
                                        "paths, or a base with generate: (orrery gen's flags) instead of workload:");
  WriteSpec(d, "cg.yml", kAxes, "  comm-groups: missing.json\n");
  auto cg = Sweep(d, "cg.yml", "out");
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.status().exit_code(), 2);
  EXPECT_EQ(cg.status().message(),
            d.File("cg.yml") + ": base.comm-groups: " + d.File("missing.json") + ": cannot open file (does it exist?)");
  EXPECT_FALSE(std::filesystem::exists(d.File("out/sweep.jsonl")));
  d.Write("nt.yml",
          "base:\n  network: \"Ring(4,50GB/s,500ns)\"\n  system: sys.json\n  workload: nothing\n" + std::string(kAxes));
  auto nt = Sweep(d, "nt.yml", "out");
  ASSERT_FALSE(nt.ok());
  EXPECT_EQ(nt.status().message(), d.File("nt.yml") + ": base.workload = \"" + d.File("nothing") +
                                       "\": no trace files " + d.File("nothing") +
                                       ".<rank>.et; allowed: the prefix of Chakra traces, one per NPU");
}

}  // namespace
}  // namespace orrery::sweep
