#include "explore/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "explore/sweep_metrics.h"
#include "explore/sweep_point.h"
#include "explore/sweep_rows.h"
#include "run/build.h"
#include "core/fnv.h"
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
  BackendRegistry builtins;  // when Options::registries is null
  Registries registries;     // what every point's simulation names things from (read-only: threads share it)
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
      p->hash = HexU64(Fnv1a(std::stoull(p->hash, nullptr, 16), "critical-path"));
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

Result<Summary> RunSweep(const SweepSpec& spec, const Options& o, std::string* dry_run_text, const Runner& runner) {
  Summary sum;
  sum.points = spec.points.size();
  auto made = MakePlan(spec, o);
  if (!made.ok()) return made.status();
  const Plan& plan = *made.value();
  const std::vector<Prepared>& prepared = plan.prepared;
  std::vector<uint64_t> mine;  // the shard's indices in the enumeration, ascending
  for (size_t k : plan.mine) mine.push_back(spec.indices[k]);
  sum.in_shard = mine.size();
  if (o.dry_run) {
    std::ostringstream t;
    t << spec.points.size() << " points";
    if (spec.filtered > 0) t << " (" << spec.filtered << " of " << spec.enumerated << " filtered out)";
    t << (o.shard_count > 1 ? ", " + std::to_string(mine.size()) + " in this shard" : "") << "\n";
    for (size_t k = 0; k < mine.size() && k < 10; ++k) {
      t << "  " << mine[k] << " [" << prepared[k].hash << "]";
      for (const Assignment& a : spec.points[plan.mine[k]]) t << " " << a.path << "=" << a.value.text;
      t << "\n";
    }
    *dry_run_text = t.str();
    return sum;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Status::Env(o.out_dir + ": cannot create the output folder: " + ec.message());
  const std::string stem = o.out_dir + "/sweep" +
                           (o.shard_count > 1 ? ".shard-" + std::to_string(o.shard_index + 1) + "-of-" +
                                                    std::to_string(o.shard_count)
                                              : std::string());
  sum.jsonl = stem + ".jsonl";
  sum.csv = stem + ".csv";
  auto existing = ReadRows(sum.jsonl);
  if (!existing.ok()) return existing.status();
  std::map<uint64_t, Row> done;
  for (Row& r : existing.value()) {
    // Kept only when the point is this shard's and its inputs are unchanged.
    const auto it = std::lower_bound(mine.begin(), mine.end(), r.index);
    if (it != mine.end() && *it == r.index && r.hash == prepared[it - mine.begin()].hash) done[r.index] = std::move(r);
  }
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
  std::FILE* log = std::fopen(sum.jsonl.c_str(), "ab");
  if (!log) return Status::Env(sum.jsonl + ": cannot append");
  std::mutex mu;
  uint64_t finished = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  auto record = [&](Row row) {
    std::lock_guard<std::mutex> lock(mu);
    if (row.status != "ok") ++failed;
    std::fputs((RowJson(row) + "\n").c_str(), log);
    std::fflush(log);
    done[row.index] = std::move(row);
    const uint64_t n = ++finished;
    if (o.progress) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double rate = secs > 0 ? static_cast<double>(n) / secs : 0;
      std::fprintf(stderr, "\rsweep: %llu/%zu points, %.1f/s, ETA %.0f s, %llu failed   ",
                   static_cast<unsigned long long>(n), todo.size(), rate,
                   rate > 0 ? static_cast<double>(todo.size() - n) / rate : 0.0, static_cast<unsigned long long>(failed));
    }
  };
  const Status ran = runner ? runner(plan, todo, record) : RunOnThreads(plan, todo, record);
  std::fclose(log);
  if (o.progress && !todo.empty()) std::fputs("\n", stderr);
  if (!ran.ok()) return ran;
  sum.ran = finished;
  sum.failed = failed;
  std::vector<Row> rows;
  for (auto& [i, r] : done) rows.push_back(r);
  ORRERY_RETURN_IF_ERROR(WriteTables(spec.axis_paths, rows, sum.jsonl, sum.csv));
  return sum;
}

}  // namespace orrery::sweep
