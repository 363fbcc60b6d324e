// `orrery search`, second half: the symbolic top-k simulated in full on a pool
// of threads, and the report (table, winner, spread, Spearman, prune counts).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tick.h"
#include "explore/search.h"
#include "run/spec.h"

namespace orrery::gen {

struct SimulateOptions {
  std::string system_path;         // system JSON
  std::string network;             // network YAML or notation
  std::string memory_path;         // ASTRA-sim remote-memory JSON (optional)
  std::string memory_config_path;  // Orrery memory YAML (optional)
  int jobs = 1;
  // Stop starting simulations once this many seconds have passed since
  // `start` (< 0: no limit); those not started stay unsimulated.
  double time_limit_s = -1;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // The backends, algorithms and memories the runs may name (the command's
  // plugins/registry_set.h, shared by every thread); null: the built-ins.
  const Registries* registries = nullptr;
};

struct Simulated {
  bool done = false;
  Tick iteration_ns = 0;  // the last rank's finish time
  std::string error;      // a failed generation or run (done stays false)
  // Done on the full engine (neither symmetric nor rank classes): why (the report's symmetry note).
  std::string full_engine;
};

// Reads the inputs once into a Spec (run/spec.h), builds each candidate
// with GenerateDense and runs the Spec with the candidate as its graph source
// (WorkloadSource), `jobs` threads taking candidates in
// list order. Result i belongs to candidates[i]; the values do not depend on
// `jobs` (each run is deterministic and shares no state).
std::vector<Simulated> SimulateCandidates(const ModelDesc& m, const std::vector<Candidate>& candidates,
                                          const SimulateOptions& options);

// Row order of the report: simulated ones by iteration time (ties by
// canonical index), then the others in symbolic order.
std::vector<size_t> ReportOrder(const std::vector<Candidate>& candidates, const std::vector<Simulated>& sims);

struct SearchHeader {
  std::string model;
  int64_t npus = 0, global_batch = 0;
  double hbm_gb = 0;
  std::string network, system;
};
std::string FormatSearchText(const SearchHeader& h, const SearchResult& r, const std::vector<Simulated>& sims);
std::string FormatSearchCsv(const SearchResult& r, const std::vector<Simulated>& sims);

}  // namespace orrery::gen
