// `orrery search`'s report: the table of candidates in simulated order, the
// candidates stopped at the time limit, the engine line, the winner, spread,
// Spearman and stability, the prune counts; the same rows as CSV.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/units.h"
#include "explore/search_run.h"

namespace orrery::gen {
namespace {

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

std::vector<size_t> ReportOrder(const std::vector<Candidate>& c, const std::vector<Simulated>& sims) {
  std::vector<size_t> order(c.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sims[a].done != sims[b].done) return sims[a].done;
    if (sims[a].done && sims[a].iteration_ns != sims[b].iteration_ns)
      return sims[a].iteration_ns < sims[b].iteration_ns;
    if (sims[a].done) return c[a].index < c[b].index;
    return a < b;  // list order
  });
  return order;
}

namespace {

// The table of the top strategies, in report order.
std::string TopTable(const SearchResult& r, const std::vector<Simulated>& sims, const std::vector<size_t>& order) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%4s %4s %3s %3s %4s %3s %2s %5s %-13s %-3s %-9s %4s %-14s %12s %14s %5s %10s\n",
                "rank", "tp", "cp", "ep", "dp", "pp", "b", "m", "schedule", "sp", "recompute", "zero", "order",
                "symbolic_ms", "simulated_ms", "twins", "index");
  out += line;
  int rank = 0;
  for (size_t i : order) {
    const Strategy& s = r.top[i].strategy;
    const std::string sim = sims[i].done            ? NsAsMs(sims[i].iteration_ns)
                            : sims[i].stopped       ? "stopped"
                            : sims[i].error.empty() ? "-"
                                                    : "error";
    const std::string rk = sims[i].done ? std::to_string(++rank) : "-";
    std::snprintf(line, sizeof line,
                  "%4s %4lld %3lld %3lld %4lld %3lld %2lld %5lld %-13s %-3s %-9s %4d %-14s %12s %14s %5llu %10llu\n",
                  rk.c_str(), static_cast<long long>(s.tp), static_cast<long long>(s.cp), static_cast<long long>(s.ep),
                  static_cast<long long>(s.dp), static_cast<long long>(s.pp), static_cast<long long>(s.microbatch_size),
                  static_cast<long long>(s.microbatches), ScheduleText(s).c_str(), s.sp ? "on" : "off",
                  RecomputeText(s.recompute), s.zero, OrderTextOf(s).c_str(), Ms(r.top[i].cost.total_s).c_str(),
                  sim.c_str(), static_cast<unsigned long long>(r.top[i].twins),
                  static_cast<unsigned long long>(r.top[i].index));
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

namespace {

// The candidates stopped at the time limit and those never started.
std::string TimeLimitLine(const SearchResult& r, const std::vector<Simulated>& sims, const WinnerStatus& w) {
  std::string stopped;
  size_t n_stopped = 0, not_started = 0;
  for (size_t i = 0; i < sims.size(); ++i) {
    if (sims[i].stopped) {
      stopped += std::string(n_stopped++ ? ", " : "") + std::to_string(r.top[i].index);
    } else if (!sims[i].done && sims[i].error.empty()) {
      ++not_started;
    }
  }
  if (w.stable) not_started -= std::min(not_started, w.not_needed);
  if (n_stopped == 0 && not_started == 0) return "";
  std::string out = "time limit: ";
  if (n_stopped > 0)
    out += std::to_string(n_stopped) + " stopped at the time limit while simulating (index " + stopped + ")";
  if (not_started > 0) out += std::string(n_stopped ? ", " : "") + std::to_string(not_started) + " not started";
  return out + "; neither is a result\n";
}

// Whether another candidate could still beat the winner (StableWinner).
std::string StableLine(const SearchResult& r, const std::vector<Simulated>& sims, const WinnerStatus& w) {
  Tick best = 0;
  for (const Simulated& s : sims) {
    if (s.done && (best == 0 || s.iteration_ns < best)) best = s.iteration_ns;
  }
  if (best == 0) return "";
  if (w.stable) {
    return "stable winner: yes, after the first " + std::to_string(w.simulated_prefix) + " of " +
           std::to_string(r.top.size()) + " candidates: its simulated " + NsAsMs(best) +
           " ms is at most the lower bound of every distinct survivor not simulated" +
           (w.not_needed > 0 ? " (" + std::to_string(w.not_needed) + " not simulated)" : "") + "\n";
  }
  return "stable winner: no: a candidate not simulated has a lower bound of " + Ms(w.open_lower_s) +
         " ms, under the best simulated " + NsAsMs(best) +
         " ms (a larger --top or --time-limit may find a better one)\n";
}

}  // namespace

std::string FormatSearchText(const SearchHeader& h, const SearchResult& r, const std::vector<Simulated>& sims,
                             const WinnerStatus& winner) {
  std::ostringstream o;
  const uint64_t survivors = r.pruned[static_cast<int>(PruneReason::kSurvives)];
  size_t simulated = 0;
  for (const Simulated& s : sims) simulated += s.done ? 1 : 0;
  o << "search: " << h.model << " on " << h.npus << " NPUs, global batch " << h.global_batch << ", HBM " << h.hbm_gb
    << " GB; network " << h.network << "; system " << h.system << "\n";
  o << "strategies: " << r.enumerated << " enumerated, " << survivors << " survive the pre-filter, " << r.distinct
    << " distinct (twins merged: ZeRO-1/2 and rank orders that run identically); top " << r.top.size()
    << (r.by_lower_bound ? " by lower bound (branch and bound: simulated in that order until the winner is stable), "
                         : " by symbolic cost, ")
    << simulated << " of them simulated\n";
  const std::vector<size_t> order = ReportOrder(r.top, sims);
  o << TopTable(r, sims, order);
  for (size_t i : order) {
    if (!sims[i].error.empty()) o << "error (index " << r.top[i].index << "): " << sims[i].error << "\n";
  }
  o << TimeLimitLine(r, sims, winner);
  if (simulated > 0) o << EngineLine(r, sims, order, simulated);
  if (simulated == 0) {
    o << "winner: none simulated (--time-limit); the " << (r.by_lower_bound ? "least lower bound" : "symbolic best")
      << " is index " << r.top.front().index << ": " << StrategyText(r.top.front().strategy) << "\n";
  } else {
    o << WinnerLines(r, sims, order, simulated);
    o << StableLine(r, sims, winner);
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
  o << "rank,tp,cp,ep,dp,pp,b,m,schedule,sp,recompute,zero,order,symbolic_ms,lower_bound_ms,simulated_ms,twins,index\n";
  int rank = 0;
  for (size_t i : ReportOrder(r.top, sims)) {
    const Strategy& s = r.top[i].strategy;
    o << (sims[i].done ? std::to_string(++rank) : "") << "," << s.tp << "," << s.cp << "," << s.ep << "," << s.dp << ","
      << s.pp << "," << s.microbatch_size << "," << s.microbatches << "," << ScheduleText(s) << ","
      << (s.sp ? "on" : "off") << "," << RecomputeText(s.recompute) << "," << s.zero << "," << OrderTextOf(s) << ","
      << Ms(r.top[i].cost.total_s) << "," << Ms(r.top[i].cost.lower_s) << ","
      << (sims[i].done      ? NsAsMs(sims[i].iteration_ns)
          : sims[i].stopped ? "stopped"
                            : "")
      << "," << r.top[i].twins << "," << r.top[i].index << "\n";
  }
  return o.str();
}

}  // namespace orrery::gen
