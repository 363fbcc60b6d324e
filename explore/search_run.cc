#include "explore/search_run.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <thread>

#include "core/units.h"
#include "gen/gen_source.h"
#include "run/build.h"
#include "run/run.h"
#include "run/spec.h"

namespace orrery::gen {
namespace {

// A candidate is the base Spec (the files, read once) with its workload as
// the graph source, completed and run (run/spec.h, run/build.h).
Simulated SimulateOne(const ModelDesc& m, const Candidate& c, const Result<Spec>& base, const Registries& registries) {
  Simulated out;
  if (!base.ok()) {
    out.error = base.status().message();
    return out;
  }
  auto w = GenerateDense(m, c.strategy);
  if (!w.ok()) {
    out.error = w.status().message();
    return out;
  }
  Spec spec = base.value();
  spec.source = WorkloadSource(std::move(w.value()),
                               "search candidate " + std::to_string(c.index) + " (" + StrategyText(c.strategy) + ")");
  const Status completed = CompleteSpec(&spec, registries);
  Result<RunReport> r = completed.ok() ? RunSpec(spec, registries) : Result<RunReport>(completed);
  if (!r.ok()) {
    out.error = r.status().message();
    return out;
  }
  for (const NpuReport& n : r->per_npu) out.iteration_ns = std::max(out.iteration_ns, n.finished_ns);
  out.done = true;
  if (!r->symmetric && r->rank_classes == 0) out.full_engine = r->symmetry_note;
  return out;
}

std::string Ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", SecondsToMs(seconds));
  return buf;
}
std::string NsAsMs(Tick ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(ns / kNsPerMs),
                static_cast<unsigned long long>(ns % kNsPerMs));
  return buf;
}
const char* RecomputeText(Recompute r) {
  return r == Recompute::kNone ? "none" : r == Recompute::kSelective ? "selective" : "full";
}

}  // namespace

std::vector<Simulated> SimulateCandidates(const ModelDesc& m, const std::vector<Candidate>& candidates,
                                          const SimulateOptions& o) {
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
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < candidates.size(); i = next++) {
      if (o.time_limit_s >= 0) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - o.start).count();
        if (elapsed >= o.time_limit_s) return;
      }
      out[i] = SimulateOne(m, candidates[i], base, registries);  // each thread writes only its own slots
    }
  };
  std::vector<std::thread> pool;
  const size_t jobs = std::min<size_t>(std::max(o.jobs, 1), std::max<size_t>(candidates.size(), 1));
  for (size_t j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return out;
}

std::vector<size_t> ReportOrder(const std::vector<Candidate>& c, const std::vector<Simulated>& sims) {
  std::vector<size_t> order(c.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sims[a].done != sims[b].done) return sims[a].done;
    if (sims[a].done && sims[a].iteration_ns != sims[b].iteration_ns)
      return sims[a].iteration_ns < sims[b].iteration_ns;
    if (sims[a].done) return c[a].index < c[b].index;
    return a < b;  // symbolic order
  });
  return order;
}

namespace {

// The table of the top strategies, in report order.
std::string TopTable(const SearchResult& r, const std::vector<Simulated>& sims, const std::vector<size_t>& order) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%4s %4s %3s %3s %4s %3s %2s %5s %-13s %-3s %-9s %4s %-14s %12s %14s %10s\n", "rank",
                "tp", "cp", "ep", "dp", "pp", "b", "m", "schedule", "sp", "recompute", "zero", "order", "symbolic_ms",
                "simulated_ms", "index");
  out += line;
  int rank = 0;
  for (size_t i : order) {
    const Strategy& s = r.top[i].strategy;
    const std::string sim = sims[i].done ? NsAsMs(sims[i].iteration_ns) : sims[i].error.empty() ? "-" : "error";
    const std::string rk = sims[i].done ? std::to_string(++rank) : "-";
    std::snprintf(line, sizeof line,
                  "%4s %4lld %3lld %3lld %4lld %3lld %2lld %5lld %-13s %-3s %-9s %4d %-14s %12s %14s %10llu\n",
                  rk.c_str(), static_cast<long long>(s.tp), static_cast<long long>(s.cp), static_cast<long long>(s.ep),
                  static_cast<long long>(s.dp), static_cast<long long>(s.pp), static_cast<long long>(s.microbatch_size),
                  static_cast<long long>(s.microbatches), ScheduleText(s).c_str(), s.sp ? "on" : "off",
                  RecomputeText(s.recompute), s.zero, OrderTextOf(s).c_str(), Ms(r.top[i].cost.total_s).c_str(),
                  sim.c_str(), static_cast<unsigned long long>(r.top[i].index));
    out += line;
  }
  return out;
}

// Which engine ran them: a full-engine run costs far more (the reasons say what to lift next).
std::string EngineLine(const SearchResult& r, const std::vector<Simulated>& sims, const std::vector<size_t>& order,
                       size_t simulated) {
  size_t full = 0;
  std::string first_full;
  for (size_t i : order) {
    if (!sims[i].done || sims[i].full_engine.empty()) continue;
    if (full++ == 0) first_full = "index " + std::to_string(r.top[i].index) + ": " + sims[i].full_engine;
  }
  std::ostringstream o;
  o << "engine: " << simulated - full << " of " << simulated << " simulated by rank classes or one symmetric rank";
  if (full > 0) o << ", " << full << " on the full engine (first, " << first_full << ")";
  o << "\n";
  return o.str();
}

// The best simulated strategy, the spread and how well the symbolic cost ranked them.
std::string WinnerLines(const SearchResult& r, const std::vector<Simulated>& sims, const std::vector<size_t>& order,
                        size_t simulated) {
  std::ostringstream o;
  char line[512];
  const size_t best = order.front(), worst = order[simulated - 1];
  o << "winner: index " << r.top[best].index << ": " << StrategyText(r.top[best].strategy) << ": simulated "
    << NsAsMs(sims[best].iteration_ns) << " ms (symbolic " << Ms(r.top[best].cost.total_s) << " ms)\n";
  std::snprintf(line, sizeof line, "spread: worst / best simulated = %s / %s ms = %.3f over %zu simulated\n",
                NsAsMs(sims[worst].iteration_ns).c_str(), NsAsMs(sims[best].iteration_ns).c_str(),
                static_cast<double>(sims[worst].iteration_ns) / static_cast<double>(sims[best].iteration_ns),
                simulated);
  o << line;
  std::vector<double> sym, sim;
  for (size_t i = 0; i < r.top.size(); ++i) {
    if (!sims[i].done) continue;
    sym.push_back(r.top[i].cost.total_s);
    sim.push_back(static_cast<double>(sims[i].iteration_ns));
  }
  const double rho = SpearmanRho(sym, sim);
  if (std::isnan(rho)) {
    o << "Spearman rank correlation, symbolic vs simulated: n/a (n = " << sym.size()
      << ", needs 2 or more distinct values)\n";
  } else {
    std::snprintf(line, sizeof line, "Spearman rank correlation, symbolic vs simulated (n = %zu): %.3f\n", sym.size(),
                  rho);
    o << line;
  }
  return o.str();
}

}  // namespace

std::string FormatSearchText(const SearchHeader& h, const SearchResult& r, const std::vector<Simulated>& sims) {
  std::ostringstream o;
  const uint64_t survivors = r.pruned[static_cast<int>(PruneReason::kSurvives)];
  size_t simulated = 0;
  for (const Simulated& s : sims) simulated += s.done ? 1 : 0;
  o << "search: " << h.model << " on " << h.npus << " NPUs, global batch " << h.global_batch << ", HBM " << h.hbm_gb
    << " GB; network " << h.network << "; system " << h.system << "\n";
  o << "strategies: " << r.enumerated << " enumerated, " << survivors << " survive the pre-filter; top " << r.top.size()
    << " by symbolic cost, " << simulated << " of them simulated\n";
  const std::vector<size_t> order = ReportOrder(r.top, sims);
  o << TopTable(r, sims, order);
  for (size_t i : order) {
    if (!sims[i].error.empty()) o << "error (index " << r.top[i].index << "): " << sims[i].error << "\n";
  }
  if (simulated > 0) o << EngineLine(r, sims, order, simulated);
  if (simulated == 0) {
    o << "winner: none simulated (--time-limit); the symbolic best is index " << r.top.front().index << ": "
      << StrategyText(r.top.front().strategy) << "\n";
  } else {
    o << WinnerLines(r, sims, order, simulated);
  }
  o << "pruned (reason: strategies):\n";
  for (int k = 1; k < kNumPruneReasons; ++k) {
    if (r.pruned[k] == 0) continue;
    o << "  " << PruneReasonText(static_cast<PruneReason>(k)) << ": " << r.pruned[k] << "\n";
  }
  o << "  (survived: " << survivors << ")\n";
  return o.str();
}

std::string FormatSearchCsv(const SearchResult& r, const std::vector<Simulated>& sims) {
  std::ostringstream o;
  o << "rank,tp,cp,ep,dp,pp,b,m,schedule,sp,recompute,zero,order,symbolic_ms,simulated_ms,index\n";
  int rank = 0;
  for (size_t i : ReportOrder(r.top, sims)) {
    const Strategy& s = r.top[i].strategy;
    o << (sims[i].done ? std::to_string(++rank) : "") << "," << s.tp << "," << s.cp << "," << s.ep << "," << s.dp << ","
      << s.pp << "," << s.microbatch_size << "," << s.microbatches << "," << ScheduleText(s) << ","
      << (s.sp ? "on" : "off") << "," << RecomputeText(s.recompute) << "," << s.zero << "," << OrderTextOf(s) << ","
      << Ms(r.top[i].cost.total_s) << "," << (sims[i].done ? NsAsMs(sims[i].iteration_ns) : "") << "," << r.top[i].index
      << "\n";
  }
  return o.str();
}

}  // namespace orrery::gen
