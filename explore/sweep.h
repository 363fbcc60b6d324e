// `orrery sweep`: every point of a design space, simulated in-process on a
// pool of threads, resumable, shardable, one row per point.
//
// A sweep spec (YAML) names a base — the inputs `orrery run` takes, or a
// generator command line — and axes that replace fields of it by dotted
// path, and filters that keep some points (explore/sweep_filter.h). The base's
// files are read and parsed once into an orrery::Spec (run/spec.h); a
// point is that Spec with fields replaced (network dimensions, system keys,
// run options, a regenerated workload) and completed, so no point writes a
// file, and its hash is the point's SpecHash.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "run/spec.h"

namespace orrery::sweep {

// One value an axis takes, as written (numbers keep their text).
struct Value {
  std::string text;
  bool is_string = false;  // quoted in YAML, or not a number
};

struct Assignment {
  std::string path;  // "network.dim1.bandwidth_gbps"
  Value value;
};

struct SweepSpec {
  std::string file;
  // The base: what `orrery run` takes (paths resolved against the spec's
  // folder), or a generator line instead of trace files.
  RunConfig base;
  std::string generate;
  // The enumeration, in canonical order: the product of `axes` (first axis
  // slowest) with the zipped lists as one more axis, or the explicit points.
  std::vector<std::string> axis_paths;  // every path a point assigns, column order
  // `filters` (explore/sweep_filter.h) keep some of them: `points` are those
  // kept, `indices` their indices in the enumeration (a row's `index`).
  std::vector<std::vector<Assignment>> points;
  std::vector<uint64_t> indices;
  uint64_t enumerated = 0, filtered = 0;
  // FNV-1a of the points before filters (part of the output folder's
  // identity, explore/sweep_folder.h: a filter added later keeps resuming).
  std::string enumeration;
};

// Points a spec may enumerate (the product of its axes, counted with checked
// products before anything is expanded) and keep after its filters (which
// run point by point, so the points filtered out are never stored), and that
// one process plans (its shard: each planned point holds its resolved Spec,
// about 3.5 KB at 64 NPUs and more with more NPUs).
// The values the kept points hold together (points x the paths they
// assign) are bounded too.
inline constexpr uint64_t kMaxSweepEnumerated = 10'000'000;
inline constexpr uint64_t kMaxSweepPoints = 1'000'000;
inline constexpr uint64_t kMaxSweepValues = 10'000'000;
inline constexpr uint64_t kMaxSweepPlanPoints = 200'000;
struct SweepLimits {
  uint64_t enumerated = kMaxSweepEnumerated, points = kMaxSweepPoints, values = kMaxSweepValues;
};

// Reads and checks the spec: unknown keys, unknown paths (with the valid
// paths near the typo), values of the wrong type, zip lists of unequal
// length, the counts above. The base's network is read to know its dimensions.
Result<SweepSpec> ReadSweepSpec(const std::string& path, const SweepLimits& limits = {});

// The paths a spec may assign, for messages and --help.
std::vector<std::string> ValidPaths(int network_dims);

// A file named in a spec, relative to the spec's folder (an absolute path as it is).
std::string ResolveSpecPath(const std::string& spec_file, const std::string& path);

struct Options {
  int jobs = 1;
  int shard_index = 0, shard_count = 1;  // this process runs points with index % count == index
  std::string out_dir;
  bool dry_run = false;
  bool progress = false;  // a progress line on stderr
  // The critical path of every point: its communication per network dimension
  // in the row (dimK_exposed_comm_ns). Part of the points' hashes.
  bool critical_path = false;
  // The backends, algorithms and memories points may name (the command's
  // plugins/registry_set.h, shared by every thread); null: the built-ins.
  const Registries* registries = nullptr;
  uint64_t max_plan_points = kMaxSweepPlanPoints;  // points this process plans at most
};

struct Row {
  uint64_t index = 0;
  std::vector<Assignment> point;
  std::string hash;    // the point's SpecHash (16 hex digits over its resolved inputs)
  std::string status;  // "ok" or the point's error
  uint64_t finished_ns = 0, compute_ns = 0, exposed_comm_ns = 0, mem_stall_ns = 0, peer_wait_ns = 0, idle_ns = 0;
  // explore/sweep_metrics.h. Absent (JSON null, empty CSV field) when unknown.
  std::optional<uint64_t> peak_local_bytes, peak_remote_bytes;  // simulated, when the run tracks capacity
  std::optional<uint64_t> gen_memory_bytes;                     // generator's closed form, largest stage
  std::string model_flops;                                      // decimal; generated workloads only
  std::optional<double> mfu;
  std::vector<uint64_t> dim_busy_ns;           // per network dimension, summed over its links
  std::vector<uint64_t> dim_exposed_comm_ns;   // per dimension, on the critical path (--critical-path)
  std::optional<uint64_t> path_comm_other_ns;  // communication on the path on no known dimension (--critical-path)
};

struct Summary {
  uint64_t points = 0, in_shard = 0, skipped = 0, ran = 0, failed = 0;
  uint64_t missing = 0;    // sweep merge --partial: points no shard has
  std::string jsonl, csv;  // files written
  std::vector<std::string> notes;  // for stderr: a torn last row dropped, shards missing from a partial merge
};

// The points of one shard, resolved (every process of an MPI sweep builds the same).
struct Plan;
Result<std::shared_ptr<const Plan>> MakePlan(const SweepSpec& spec, const Options& options);
size_t PlanSize(const Plan& plan);
// Simulates the plan's k-th point (thread-safe; a failure is the row's status).
Row SimulatePoint(const Plan& plan, size_t k);

// Runs the plan positions `todo`, calling `record` (thread-safe) with each
// row in any order. The default: a pool of Options::jobs threads.
using Runner =
    std::function<Status(const Plan& plan, const std::vector<size_t>& todo, const std::function<void(Row)>& record)>;

// Runs the spec's points of this shard not already in the output (resume),
// appending a JSON line per point as it finishes, then rewrites the shard's
// JSON Lines and CSV in index order (byte-identical for any --jobs).
Result<Summary> RunSweep(const SweepSpec& spec, const Options& options, std::string* dry_run_text,
                         const Runner& runner = nullptr);

struct MergeOptions {
  // Merge what is there when shards or rows are missing (saying which in
  // Summary::notes) instead of refusing.
  bool partial = false;
};

// Unions the shards' JSON Lines in `dir` into sweep.jsonl and sweep.csv
// (explore/sweep_folder.cc). Refused: a point in two shards, shards of
// different specs or shard counts, a shard still being written, and unless
// `partial`, missing shards or rows (each shard's STEM.id says how many it has).
Result<Summary> MergeShards(const std::string& dir, const MergeOptions& options = {});

std::string RowJson(const Row& row);
Result<Row> ParseRowJson(const std::string& line);
// `dims`: the dimension columns (the most any row has). A row's values go
// under the header's axis columns (empty where its point assigns no value).
std::string CsvHeader(const std::vector<std::string>& axis_paths, size_t dims);
std::string CsvRow(const Row& row, const std::vector<std::string>& axis_paths, size_t dims);

}  // namespace orrery::sweep
