// `orrery search`, second half: the symbolic top-k simulated in full on a pool
// of threads, and the report (table, winner, spread, Spearman, prune counts).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/tick.h"
#include "explore/search.h"
#include "explore/search_progress.h"
#include "run/spec.h"

namespace orrery::gen {

struct SimulateOptions {
  std::string system_path;         // system JSON
  std::string network;             // network YAML or notation
  std::string memory_path;         // ASTRA-sim remote-memory JSON (optional)
  std::string memory_config_path;  // Orrery memory YAML (optional)
  int jobs = 1;
  // This many seconds after `start` (< 0: no limit) no simulation starts and
  // the running ones stop (within about a second: run/build.h, RunStop);
  // those are reported as stopped, those not started stay unsimulated.
  double time_limit_s = -1;
  // Stop starting simulations once the winner is stable (StableWinner);
  // false: simulate every candidate (within the time limit).
  bool stop_when_stable = true;
  // The least lower bound of the distinct survivors not among the candidates
  // (SearchResult::rest_lower_s).
  double rest_lower_s = std::numeric_limits<double>::infinity();
  SearchProgress* progress = nullptr;  // optional
  // Optional: set, it stops the running simulations (reported as stopped,
  // as at the time limit). SimulateCandidates sets it once the winner is
  // stable (stop_when_stable): the runs still going are past the candidates
  // a single worker would have simulated. Null: a flag of its own.
  std::atomic<bool>* cancel = nullptr;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // The backends, algorithms and memories the runs may name (the command's
  // plugins/registry_set.h, shared by every thread); null: the built-ins.
  const Registries* registries = nullptr;
};

struct Simulated {
  bool done = false;
  bool stopped = false;   // stopped at the time limit while simulating (not a result)
  Tick iteration_ns = 0;  // the last rank's finish time
  std::string error;      // a failed generation or run (done stays false)
  // Done on the full engine (neither symmetric nor rank classes): why (the report's symmetry note).
  std::string full_engine;
};

// The stop rule of the search (issue 30 part 5): candidates are simulated in
// symbolic order, and the winner is stable once the best simulated time is at
// most SymbolicCost::lower_s of every distinct survivor not simulated — the
// candidates not started, those running or stopped, and the survivors outside
// the list (`rest_lower_s`). Because lower_s is a lower bound of a candidate's
// simulated time (search_cost.h), no candidate left can beat the winner. A
// candidate whose simulation failed cannot win and no longer counts. Not
// thread-safe (the caller locks); candidates start in list order.
class StableWinner {
 public:
  StableWinner(const std::vector<double>& lower_s, double rest_lower_s);
  size_t next() const { return next_; }
  void Start();  // the candidate next() starts
  // Candidate i ended: simulated in `simulated_s` (done), failed, or stopped
  // or never run (`stays_open`: it could still win).
  void Finish(size_t i, bool done, bool stays_open, double simulated_s);
  bool Stable() const;
  // The least lower bound of the candidates still open (infinity: none).
  double OpenLower() const;
  double best_s() const { return best_s_; }

 private:
  std::vector<double> suffix_min_;  // [i]: least lower bound of candidates i..n-1
  std::vector<double> lower_s_;
  std::vector<uint8_t> open_;  // started and not done (running or stopped)
  double rest_lower_s_;
  size_t next_ = 0;
  double best_s_ = std::numeric_limits<double>::infinity();
};

// The candidates a single worker simulates in list order before the winner is
// stable: the least k such that the winner is stable once 0..k-1 are done (the
// size when it never is). A candidate not simulated (sims[i] neither done nor
// stopped) stays open unless it failed (an error). StableAfter: stable after exactly k.
size_t StablePrefix(const std::vector<double>& lower_s, double rest_lower_s, const std::vector<Simulated>& sims);
bool StableAfter(const std::vector<double>& lower_s, double rest_lower_s, const std::vector<Simulated>& sims, size_t k);

// What the simulations found out about the winner.
struct WinnerStatus {
  bool stable = false;
  size_t simulated_prefix = 0;  // StablePrefix: the candidates the search needed (all: not stable)
  double stable_after_s = 0;    // since SimulateOptions::start, when it became stable
  double open_lower_s = std::numeric_limits<double>::infinity();  // not stable: the least open lower bound
  size_t not_needed = 0;  // candidates not simulated because the winner was stable
};

// Reads the inputs once into a Spec (run/spec.h), builds each candidate
// with GenerateDense and runs the Spec with the candidate as its graph source
// (WorkloadSource), `jobs` threads taking candidates in
// list order. Result i belongs to candidates[i]; the values do not depend on
// `jobs` (each run is deterministic and shares no state).
std::vector<Simulated> SimulateCandidates(const ModelDesc& m, const std::vector<Candidate>& candidates,
                                          const SimulateOptions& options, WinnerStatus* winner = nullptr);

// Row order of the report: simulated ones by iteration time (ties by
// canonical index), then the others in list order.
std::vector<size_t> ReportOrder(const std::vector<Candidate>& candidates, const std::vector<Simulated>& sims);

struct SearchHeader {
  std::string model;
  int64_t npus = 0, global_batch = 0;
  double hbm_gb = 0;
  std::string network, system;
};
std::string FormatSearchText(const SearchHeader& h, const SearchResult& r, const std::vector<Simulated>& sims,
                             const WinnerStatus& winner = {});
std::string FormatSearchCsv(const SearchResult& r, const std::vector<Simulated>& sims);

}  // namespace orrery::gen
