#include "explore/sweep.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/fnv.h"
#include "core/parse.h"
#include "explore/sweep_metrics.h"
#include "explore/sweep_point.h"
#include "explore/sweep_rows.h"
#include "run/build.h"
#include "run/run.h"
#include "run/spec.h"

namespace orrery::sweep {

struct Plan {
  const SweepSpec* spec = nullptr;
  Options options;
  Base base;
  std::vector<size_t> mine;  // positions in spec->points, this shard's
  std::vector<Prepared> prepared;
  std::vector<std::shared_ptr<const GenFigures>> gen;  // per position in `mine` (null: not generated)
  BackendRegistry builtins;                            // when Options::registries is null
  Registries registries;  // what every point's simulation names things from (read-only: threads share it)
};

size_t PlanSize(const Plan& plan) { return plan.mine.size(); }

Result<std::shared_ptr<const Plan>> MakePlan(const SweepSpec& spec, const Options& o) {
  auto plan = std::make_shared<Plan>();
  plan->spec = &spec;
  plan->options = o;
  if (o.registries) {
    plan->registries = *o.registries;
  } else {
    RegisterBuiltinBackends(&plan->builtins);
    plan->registries = Registries{&plan->builtins, nullptr, nullptr};
  }
  const Registries& registries = plan->registries;
  // Each planned point holds its resolved Spec: counted before any is made.
  const uint64_t count = static_cast<uint64_t>(o.shard_count), index = static_cast<uint64_t>(o.shard_index);
  const uint64_t in_shard = spec.points.size() > index ? (spec.points.size() - index + count - 1) / count : 0;
  if (in_shard > o.max_plan_points) {
    return Status::Invalid(spec.file + ": " + std::to_string(in_shard) + " points to plan in this process (" +
                           std::to_string(spec.points.size()) + " in " + std::to_string(count) +
                           " shard(s)); allowed: at most " + std::to_string(o.max_plan_points) +
                           " per process: run it as --shard=I/N with N >= " +
                           std::to_string((spec.points.size() + o.max_plan_points - 1) / o.max_plan_points));
  }
  auto base = ReadBase(spec, registries);
  if (!base.ok()) return base.status();
  plan->base = std::move(base.value());
  // Every point of the shard is resolved before any runs: a bad value ends
  // the sweep here, with the point and path. Shards are taken over the points
  // the filters keep, so they stay balanced.
  Preparer prep(spec, plan->base, registries);
  std::map<std::string, std::shared_ptr<const GenFigures>> figures;
  for (size_t k = 0; k < spec.points.size(); ++k) {
    if (static_cast<int>(k % static_cast<size_t>(o.shard_count)) != o.shard_index) continue;
    auto p = prep.Prepare(spec.indices[k], spec.points[k]);
    if (!p.ok()) return p.status();
    if (o.critical_path) {
      p->spec.observe.critical_path = true;  // not in SpecHash (it observes), but it adds columns
      uint64_t seed = 0;                     // the point's hash: 16 hex digits of our own
      std::from_chars(p->hash.data(), p->hash.data() + p->hash.size(), seed, 16);
      p->hash = HexU64(Fnv1a(seed, "critical-path"));
    }
    std::shared_ptr<const GenFigures> g;
    if (p->generate && p->error.empty()) {
      const std::string line = gen::GenArgsText(*p->generate);
      auto it = figures.find(line);
      if (it == figures.end()) {
        auto f = GeneratedFigures(*p->generate, p->spec.system.peak_perf_tflops);
        it = figures.emplace(line, f.ok() ? std::make_shared<const GenFigures>(f.value()) : nullptr).first;
      }
      g = it->second;
    }
    plan->mine.push_back(k);
    plan->prepared.push_back(std::move(p.value()));
    plan->gen.push_back(std::move(g));
  }
  return std::shared_ptr<const Plan>(std::move(plan));
}

Row SimulatePoint(const Plan& plan, size_t k) {
  const Prepared& p = plan.prepared[k];
  Row row;
  row.index = plan.spec->indices[plan.mine[k]];
  row.point = plan.spec->points[plan.mine[k]];
  row.hash = p.hash;
  if (!p.error.empty()) {
    row.status = p.error;
    return row;
  }
  auto report = RunSpec(p.spec, plan.registries);
  if (!report.ok()) {
    row.status = report.status().message();
    return row;
  }
  row.status = "ok";
  FillRow(report.value(), p.spec.run.iterations, plan.gen[k].get(), &row);
  return row;
}

namespace {

Status RunOnThreads(const Plan& plan, const std::vector<size_t>& todo, const std::function<void(Row)>& record) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t t; (t = next.fetch_add(1)) < todo.size();) record(SimulatePoint(plan, todo[t]));
  };
  std::vector<std::thread> pool;
  for (int j = 1; j < std::max(1, plan.options.jobs); ++j) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return Status::Ok();
}

}  // namespace

namespace {

using RowsByIndex = std::map<uint64_t, Row>;

std::string DryRunText(const SweepSpec& spec, const Plan& plan, const std::vector<uint64_t>& mine) {
  std::ostringstream t;
  t << spec.points.size() << " points";
  if (spec.filtered > 0) t << " (" << spec.filtered << " of " << spec.enumerated << " filtered out)";
  t << (plan.options.shard_count > 1 ? ", " + std::to_string(mine.size()) + " in this shard" : "") << "\n";
  for (size_t k = 0; k < mine.size() && k < 10; ++k) {
    t << "  " << mine[k] << " [" << plan.prepared[k].hash << "]";
    for (const Assignment& a : spec.points[plan.mine[k]]) t << " " << a.path << "=" << a.value.text;
    t << "\n";
  }
  return t.str();
}

// DIR/sweep, or DIR/sweep.shard-I-of-N for a shard.
std::string OutputStem(const Options& o) {
  return o.out_dir + "/sweep" +
         (o.shard_count > 1 ? ".shard-" + std::to_string(o.shard_index + 1) + "-of-" + std::to_string(o.shard_count)
                            : std::string());
}

// The rows of an earlier run kept (resume): those of this shard's points
// whose inputs are unchanged (the same hash).
Result<RowsByIndex> KeptRows(const std::string& jsonl, const Plan& plan, const std::vector<uint64_t>& mine) {
  ORRERY_PARSE_OR_RETURN(std::vector<Row> existing, ReadRows(jsonl));
  RowsByIndex done;
  for (Row& r : existing) {
    const auto it = std::lower_bound(mine.begin(), mine.end(), r.index);
    if (it != mine.end() && *it == r.index && r.hash == plan.prepared[it - mine.begin()].hash)
      done[r.index] = std::move(r);
  }
  return done;
}

// Appends each finished row to the JSON Lines file as it comes (thread-safe),
// with a progress line on stderr when asked.
class RowLog {
 public:
  RowLog(std::FILE* file, RowsByIndex* done, size_t todo, bool progress)
      : file_(file), done_(done), todo_(todo), progress_(progress) {}

  void Record(Row row) {
    std::lock_guard<std::mutex> lock(mu_);
    if (row.status != "ok") ++failed_;
    std::fputs((RowJson(row) + "\n").c_str(), file_);
    std::fflush(file_);
    (*done_)[row.index] = std::move(row);
    const uint64_t n = ++finished_;
    if (!progress_) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = secs > 0 ? static_cast<double>(n) / secs : 0;
    std::fprintf(stderr, "\rsweep: %llu/%zu points, %.1f/s, ETA %.0f s, %llu failed   ",
                 static_cast<unsigned long long>(n), todo_, rate,
                 rate > 0 ? static_cast<double>(todo_ - n) / rate : 0.0, static_cast<unsigned long long>(failed_));
  }
  uint64_t finished() const { return finished_; }
  uint64_t failed() const { return failed_; }

 private:
  std::FILE* file_;
  RowsByIndex* done_;
  size_t todo_;
  bool progress_;
  std::mutex mu_;
  uint64_t finished_ = 0, failed_ = 0;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

Result<Summary> RunSweep(const SweepSpec& spec, const Options& o, std::string* dry_run_text, const Runner& runner) {
  Summary sum;
  sum.points = spec.points.size();
  ORRERY_PARSE_OR_RETURN(const std::shared_ptr<const Plan> made, MakePlan(spec, o));
  const Plan& plan = *made;
  std::vector<uint64_t> mine;  // the shard's indices in the enumeration, ascending
  for (size_t k : plan.mine) mine.push_back(spec.indices[k]);
  sum.in_shard = mine.size();
  if (o.dry_run) {
    *dry_run_text = DryRunText(spec, plan, mine);
    return sum;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Status::Env(o.out_dir + ": cannot create the output folder: " + ec.message());
  const std::string stem = OutputStem(o);
  sum.jsonl = stem + ".jsonl";
  sum.csv = stem + ".csv";
  ORRERY_PARSE_OR_RETURN(RowsByIndex done, KeptRows(sum.jsonl, plan, mine));
  std::vector<size_t> todo;
  for (size_t k = 0; k < mine.size(); ++k) {
    if (!done.count(mine[k])) todo.push_back(k);
  }
  sum.skipped = mine.size() - todo.size();
  // Rows of points already done stay; the file is rewritten with exactly them.
  {
    std::ofstream out(sum.jsonl, std::ios::binary | std::ios::trunc);
    for (const auto& [i, r] : done) out << RowJson(r) << "\n";
  }
  std::FILE* file = std::fopen(sum.jsonl.c_str(), "ab");
  if (!file) return Status::Env(sum.jsonl + ": cannot append");
  RowLog log(file, &done, todo.size(), o.progress);
  auto record = [&log](Row row) { log.Record(std::move(row)); };
  const Status ran = runner ? runner(plan, todo, record) : RunOnThreads(plan, todo, record);
  std::fclose(file);
  if (o.progress && !todo.empty()) std::fputs("\n", stderr);
  if (!ran.ok()) return ran;
  sum.ran = log.finished();
  sum.failed = log.failed();
  std::vector<Row> rows;
  for (auto& [i, r] : done) rows.push_back(r);
  ORRERY_RETURN_IF_ERROR(WriteTables(spec.axis_paths, rows, sum.jsonl, sum.csv));
  return sum;
}

}  // namespace orrery::sweep
