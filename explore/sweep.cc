#include "explore/sweep.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/fnv.h"
#include "core/output_file.h"
#include "core/parse.h"
#include "explore/sweep_folder.h"
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

// `stop`: set when rows can no longer be saved (a full disk); no point starts after it.
Status RunOnThreads(const Plan& plan, const std::vector<size_t>& todo, const std::function<void(Row)>& record,
                    const std::atomic<bool>* stop) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t t; !stop->load() && (t = next.fetch_add(1)) < todo.size();) record(SimulatePoint(plan, todo[t]));
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

// The rows of an earlier run kept (resume): those of this shard's points
// whose inputs are unchanged (the same hash).
RowsByIndex KeptRows(std::vector<Row> existing, const Plan& plan, const std::vector<uint64_t>& mine) {
  RowsByIndex done;
  for (Row& r : existing) {
    const auto it = std::lower_bound(mine.begin(), mine.end(), r.index);
    if (it != mine.end() && *it == r.index && r.hash == plan.prepared[it - mine.begin()].hash)
      done[r.index] = std::move(r);
  }
  return done;
}

// Appends each finished row to the JSON Lines file as it comes (thread-safe),
// one write per row, so a kill loses at most the row being written; with a
// progress line on stderr when asked. A row that cannot be written (a full
// disk) is cut off again, and no later row is appended: the file stays whole
// lines, and `stop` ends the sweep.
class RowLog {
 public:
  RowLog(int fd, uint64_t size, RowsByIndex* done, size_t todo, bool progress)
      : fd_(fd), size_(size), done_(done), todo_(todo), progress_(progress) {}

  void Record(Row row) {
    std::lock_guard<std::mutex> lock(mu_);
    if (row.status != "ok") ++failed_;
    if (error_ == 0) Append(RowJson(row) + "\n");
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
  uint64_t appended() const { return appended_; }
  int error() const { return error_; }  // errno of the first failed append, 0: none
  const std::atomic<bool>* stop() const { return &stop_; }

 private:
  void Append(const std::string& line) {
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        (void)!::ftruncate(fd_, static_cast<off_t>(size_));  // the part written goes: whole lines only
        stop_ = true;
        return;
      }
      done += static_cast<size_t>(n);
    }
    size_ += line.size();
    ++appended_;
  }

  int fd_;
  uint64_t size_;
  RowsByIndex* done_;
  size_t todo_;
  bool progress_;
  std::mutex mu_;
  uint64_t finished_ = 0, failed_ = 0, appended_ = 0;
  int error_ = 0;
  std::atomic<bool> stop_{false};
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The files the sweep reads, for refusing an output that is one of them.
std::vector<NamedFile> SweepInputs(const SweepSpec& spec) {
  const SpecFiles& f = spec.base.files;
  std::vector<NamedFile> in = {{"the spec", spec.file},
                               {"base.system", f.system},
                               {"base.network", f.network},
                               {"base.memory", f.memory_config},
                               {"base.remote-memory", f.remote_memory},
                               {"base.comm-groups", f.comm_groups}};
  for (const std::string& trace : TraceFilesOf(f.workload_prefix)) in.push_back({"base.workload", trace});
  return in;
}

// The output folder made, locked for this output (another sweep on it:
// exit 1) and claimed for this spec (another spec's rows in it: exit 2).
Result<FolderLock> OpenFolder(const SweepSpec& spec, const Plan& plan, uint64_t rows, const std::string& stem) {
  const Options& o = plan.options;
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Status::Env(o.out_dir + ": cannot create the output folder: " + ec.message());
  const std::string path = o.out_dir + "/" + stem;
  ORRERY_RETURN_IF_ERROR(CheckOutputsAreNotInputs({{"--out's " + stem + ".jsonl", path + ".jsonl"},
                                                   {"--out's " + stem + ".csv", path + ".csv"}},
                                                  SweepInputs(spec)));
  auto lock = FolderLock::Take(o.out_dir, stem + ".jsonl.lock", false);
  if (!lock.ok()) return Status::Env(lock.status().message() + ", or give this sweep another --out");
  FolderIdentity id;
  id.identity = SpecIdentity(spec, SpecCanonical(plan.base.spec), o.critical_path);
  id.spec = spec.file;
  id.axis_paths = spec.axis_paths;
  id.points = spec.points.size();
  id.rows = rows;
  id.shard_index = o.shard_index;
  id.shard_count = o.shard_count;
  ORRERY_RETURN_IF_ERROR(ClaimFolder(o.out_dir, id));
  RemoveStaleTemporaries(o.out_dir, stem);
  return lock;
}

// The rows kept from an earlier run (resume). When the log holds anything
// else — rows of points no longer in the shard, a torn last line — it is
// rewritten with exactly the kept rows, whole or not at all.
Result<RowsByIndex> ResumeLog(const std::string& jsonl, const Plan& plan, const std::vector<uint64_t>& mine,
                              std::vector<std::string>* notes) {
  ORRERY_PARSE_OR_RETURN(RowFile file, ReadRows(jsonl));
  const size_t lines = file.rows.size();
  RowsByIndex done = KeptRows(std::move(file.rows), plan, mine);
  if (file.torn_bytes > 0) {
    notes->push_back(
        jsonl + ": its last line was cut off (" + std::to_string(file.torn_bytes) +
        " bytes: a run killed while writing it) and is dropped; its point runs again unless a whole row has it");
  }
  if (file.torn_bytes == 0 && done.size() == lines) return done;
  std::string text;
  for (const auto& [i, r] : done) text += RowJson(r) + "\n";
  ORRERY_RETURN_IF_ERROR(WriteFileWhole(jsonl, text));
  return done;
}

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
  const std::string stem = StemName(o.shard_index, o.shard_count);
  ORRERY_PARSE_OR_RETURN(const FolderLock lock, OpenFolder(spec, plan, mine.size(), stem));
  sum.jsonl = o.out_dir + "/" + stem + ".jsonl";
  sum.csv = o.out_dir + "/" + stem + ".csv";
  ORRERY_PARSE_OR_RETURN(RowsByIndex done, ResumeLog(sum.jsonl, plan, mine, &sum.notes));
  std::vector<size_t> todo;
  for (size_t k = 0; k < mine.size(); ++k) {
    if (!done.count(mine[k])) todo.push_back(k);
  }
  sum.skipped = mine.size() - todo.size();
  const int fd = ::open(sum.jsonl.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    return Status::Env(sum.jsonl + ": cannot append to it (" + std::strerror(errno) + ")");
  }
  RowLog log(fd, static_cast<uint64_t>(st.st_size), &done, todo.size(), o.progress);
  auto record = [&log](Row row) { log.Record(std::move(row)); };
  const Status ran = runner ? runner(plan, todo, record) : RunOnThreads(plan, todo, record, log.stop());
  ::close(fd);
  if (o.progress && !todo.empty()) std::fputs("\n", stderr);
  if (!ran.ok()) return ran;
  sum.ran = log.finished();
  sum.failed = log.failed();
  std::vector<Row> rows;
  for (auto& [i, r] : done) rows.push_back(r);
  const Status wrote = WriteTables(spec.axis_paths, rows, sum.jsonl, sum.csv);
  if (log.error() != 0) {
    const std::string why = sum.jsonl + ": appending a row failed (" + std::strerror(log.error()) +
                            "); the sweep stopped (" + std::to_string(sum.ran) + " of " + std::to_string(todo.size()) +
                            " points simulated)";
    if (!wrote.ok()) {
      return Status::Env(why + " and " + sum.jsonl + " keeps the " + std::to_string(sum.skipped + log.appended()) +
                         " rows written before; writing the tables failed too: " + wrote.message() +
                         "; free space and run the sweep again to finish");
    }
    if (sum.ran < todo.size()) {
      return Status::Env(why + "; the tables hold every row simulated: run the sweep again to finish");
    }
    sum.notes.push_back(why + "; the tables hold every row");
  }
  ORRERY_RETURN_IF_ERROR(wrote);
  return sum;
}

}  // namespace orrery::sweep
