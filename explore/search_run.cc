#include "explore/search_run.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "core/units.h"
#include "gen/gen_source.h"
#include "run/build.h"
#include "run/run.h"
#include "run/spec.h"

namespace orrery::gen {
namespace {

// A candidate is the base Spec (the files, read once) with its workload as
// the graph source, completed and run (run/spec.h, run/build.h); the stop is
// looked at in the generation (before each stage and microbatch pass), before
// every graph loaded and every rank's peers listed, before the run and in the
// event loop.
Simulated SimulateOne(const ModelDesc& m, const Candidate& c, const Result<Spec>& base, const Registries& registries,
                      RunStop stop) {
  Simulated out;
  if (!base.ok()) {
    out.error = base.status().message();
    return out;
  }
  auto w = GenerateDense(m, c.strategy, [&stop] { return stop.Fire(); });
  if (!w.ok()) {
    out.stopped = stop.stopped;
    if (!out.stopped) out.error = w.status().message();
    return out;
  }
  Spec spec = base.value();
  spec.source = StoppableSource(WorkloadSource(std::move(w.value()), "search candidate " + std::to_string(c.index) +
                                                                         " (" + StrategyText(c.strategy) + ")"),
                                &stop);
  const Status completed = CompleteSpec(&spec, registries);
  Result<RunReport> r = completed.ok() ? RunSpec(spec, registries, nullptr, &stop) : Result<RunReport>(completed);
  if (!r.ok()) {
    out.stopped = stop.stopped;
    if (!out.stopped) out.error = r.status().message();
    return out;
  }
  for (const NpuReport& n : r->per_npu) out.iteration_ns = std::max(out.iteration_ns, n.finished_ns);
  out.done = true;
  if (!r->symmetric && r->rank_classes == 0) out.full_engine = r->symmetry_note;
  return out;
}

// A candidate stopped at the time limit or never started could still win; a failed one cannot.
bool StaysOpen(const Simulated& s) { return s.stopped || (!s.done && s.error.empty()); }

}  // namespace

StableWinner::StableWinner(const std::vector<double>& lower_s, double rest_lower_s)
    : suffix_min_(lower_s.size() + 1, std::numeric_limits<double>::infinity()),
      lower_s_(lower_s),
      open_(lower_s.size(), 0),
      rest_lower_s_(rest_lower_s) {
  for (size_t i = lower_s.size(); i-- > 0;) suffix_min_[i] = std::min(suffix_min_[i + 1], lower_s[i]);
}

void StableWinner::Start() { open_[next_++] = 1; }

void StableWinner::Finish(size_t i, bool done, bool stays_open, double simulated_s) {
  if (stays_open) return;
  open_[i] = 0;
  if (done) best_s_ = std::min(best_s_, simulated_s);
}

double StableWinner::OpenLower() const {
  double low = std::min(rest_lower_s_, suffix_min_[next_]);
  for (size_t i = 0; i < next_; ++i) {
    if (open_[i]) low = std::min(low, lower_s_[i]);
  }
  return low;
}

bool StableWinner::Stable() const { return best_s_ <= OpenLower(); }

bool StableAfter(const std::vector<double>& lower_s, double rest_lower_s, const std::vector<Simulated>& sims,
                 size_t k) {
  StableWinner w(lower_s, rest_lower_s);
  for (size_t i = 0; i < k; ++i) {
    w.Start();
    w.Finish(i, sims[i].done, StaysOpen(sims[i]), NsToSeconds(static_cast<double>(sims[i].iteration_ns)));
  }
  return w.Stable();
}

size_t StablePrefix(const std::vector<double>& lower_s, double rest_lower_s, const std::vector<Simulated>& sims) {
  StableWinner w(lower_s, rest_lower_s);
  for (size_t i = 0; i < sims.size(); ++i) {
    if (w.Stable()) return i;
    w.Start();
    w.Finish(i, sims[i].done, StaysOpen(sims[i]), NsToSeconds(static_cast<double>(sims[i].iteration_ns)));
  }
  return sims.size();
}

namespace {

// The state the simulation workers share, under one lock.
class SimulationBoard {
 public:
  SimulationBoard(const std::vector<Candidate>& candidates, const SimulateOptions& o, std::vector<Simulated>* out,
                  std::atomic<bool>* cancel)
      : c_(candidates), o_(o), out_(out), cancel_(cancel), watch_(LowerBounds(candidates), o.rest_lower_s) {}

  // The next candidate to simulate, or false when none should start.
  bool Take(size_t* i) {
    std::lock_guard<std::mutex> lock(mu_);
    if (watch_.next() >= c_.size() || (o_.stop_when_stable && watch_.Stable())) return false;
    if (o_.time_limit_s >= 0 && Elapsed() >= o_.time_limit_s) return false;
    *i = watch_.next();
    watch_.Start();
    return true;
  }

  void Done(size_t i, Simulated result) {
    std::lock_guard<std::mutex> lock(mu_);
    const Simulated& r = (*out_)[i] = std::move(result);  // each slot written once, under the lock
    watch_.Finish(i, r.done, StaysOpen(r), NsToSeconds(static_cast<double>(r.iteration_ns)));
    ++finished_;
    stopped_ += r.stopped ? 1 : 0;
    if (r.done && (best_ns_ == 0 || r.iteration_ns < best_ns_)) best_ns_ = r.iteration_ns;
    if (!status_.stable && watch_.Stable()) {
      status_.stable = true;
      status_.stable_after_s = Elapsed();
      if (o_.stop_when_stable && cancel_) cancel_->store(true);
    }
    if (o_.progress) o_.progress->Simulating(finished_, c_.size(), stopped_, best_ns_);
  }

  // Once the workers are done: a stable winner's results beyond the prefix a
  // single worker would have simulated are dropped, so the output does not
  // depend on the number of jobs.
  WinnerStatus Close() {
    WinnerStatus s = status_;
    std::vector<double> lower = LowerBounds(c_);
    const size_t k = StablePrefix(lower, o_.rest_lower_s, *out_);
    s.stable = k <= c_.size() && StableAfter(lower, o_.rest_lower_s, *out_, k);
    if (!s.stable) s.open_lower_s = watch_.OpenLower();
    if (s.stable && o_.stop_when_stable) {
      for (size_t i = k; i < c_.size(); ++i) (*out_)[i] = Simulated{};
      s.not_needed = c_.size() - k;
    }
    s.simulated_prefix = k;
    return s;
  }

 private:
  static std::vector<double> LowerBounds(const std::vector<Candidate>& c) {
    std::vector<double> v;
    for (const Candidate& x : c) v.push_back(x.cost.lower_s);
    return v;
  }
  double Elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - o_.start).count(); }

  const std::vector<Candidate>& c_;
  const SimulateOptions& o_;
  std::vector<Simulated>* out_;
  std::atomic<bool>* cancel_;
  std::mutex mu_;
  StableWinner watch_;
  WinnerStatus status_;
  size_t finished_ = 0, stopped_ = 0;
  Tick best_ns_ = 0;
};

}  // namespace

std::vector<Simulated> SimulateCandidates(const ModelDesc& m, const std::vector<Candidate>& candidates,
                                          const SimulateOptions& o, WinnerStatus* winner) {
  std::vector<Simulated> out(candidates.size());
  // The inputs every candidate shares, read and parsed once.
  RunConfig rc;
  rc.files.system = o.system_path;
  rc.files.network = o.network;
  rc.files.remote_memory = o.memory_path;
  rc.files.memory_config = o.memory_config_path;
  const BackendRegistry builtins = DefaultBackends();
  const Registries registries = o.registries ? *o.registries : Registries{&builtins};
  const Result<Spec> base = ReadSpecInputs(rc, registries);
  RunStop stop;
  if (o.time_limit_s >= 0) {
    stop.has_deadline = true;
    stop.deadline = o.start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(o.time_limit_s));
  }
  std::atomic<bool> own_cancel{false};
  stop.cancel = o.cancel ? o.cancel : &own_cancel;
  SimulationBoard board(candidates, o, &out, o.cancel ? o.cancel : &own_cancel);
  auto worker = [&] {
    for (size_t i = 0; board.Take(&i);) board.Done(i, SimulateOne(m, candidates[i], base, registries, stop));
  };
  std::vector<std::thread> pool;
  const size_t jobs = std::min<size_t>(std::max(o.jobs, 1), std::max<size_t>(candidates.size(), 1));
  for (size_t j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  const WinnerStatus status = board.Close();
  if (winner) *winner = status;
  return out;
}

}  // namespace orrery::gen
