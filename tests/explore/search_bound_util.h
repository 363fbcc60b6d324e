// Every survivor of a search space simulated against its lower bound
// (SymbolicCost::lower_s): tests/explore/search_bound_test.cc on small
// spaces, bench/search_bound_bench.cc on larger ones.
#pragma once
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "explore/search.h"
#include "explore/search_run.h"
#include "extern/astra_config.h"
#include "extern/network_dims.h"

namespace orrery::gen {

struct BoundSpace {
  ModelDesc model;
  int64_t npus = 0, global_batch = 0;
  std::vector<int64_t> microbatch_sizes{1, 2, 4, 8};
  std::string network;  // notation
  // Added to the system JSON: 1 TFLOP/s, local-mem-bw 50 GB/s, 4 chunks per
  // collective, endpoint delay 10 ns, one active chunk per dimension.
  std::string system_extra;
  std::string system_json;  // instead, the whole system JSON
  int jobs = 2;
  // Larger spaces (the bench): only the `top` survivors of least lower bound,
  // twins merged, the simulations stopped `time_limit_s` after they begin
  // (those stopped or not started are counted apart, not checked).
  size_t top = size_t{1} << 30;
  double time_limit_s = -1;
};

struct BoundCheck {
  size_t simulated = 0;       // survivors simulated (all of them)
  size_t stopped = 0;         // stopped or not started at BoundSpace::time_limit_s (its seconds in all)
  size_t with_ep = 0;         // of which with ep > 1
  double tightest = 0;        // the largest lower_s / simulated
  std::string violations;     // one line per candidate simulated below its bound, or that failed
  std::string tightest_text;  // the candidate of `tightest`
};

// The system JSON, in a folder of its own removed afterwards (the tests'
// TempDir is not in the bench's build).
class SystemFile {
 public:
  explicit SystemFile(const BoundSpace& b) {
    char tmpl[] = "/tmp/orrery-bound-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) dir_ = tmpl;
    std::ofstream out(path());
    if (!b.system_json.empty()) {
      out << b.system_json;
      return;
    }
    out << R"({"roofline-enabled": 1, "peak-perf": 1, "local-mem-bw": 50, )"
        << R"("preferred-dataset-splits": 4, "endpoint-delay": 10)" << b.system_extra << "}";
  }
  ~SystemFile() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  std::string path() const { return dir_ + "/sys.json"; }

 private:
  std::string dir_;
};

inline BoundCheck CheckEverySurvivor(const BoundSpace& b) {
  BoundCheck out;
  const SystemFile file(b);
  auto sys = ReadAstraSystemJson(file.path());
  auto dims = ReadNetworkDims(b.network);
  if (!sys.ok() || !dims.ok()) {
    out.violations = "bad inputs: " + (sys.ok() ? dims.status().message() : sys.status().message());
    return out;
  }
  SearchSpace space;
  space.npus = b.npus;
  space.global_batch = b.global_batch;
  space.microbatch_sizes = b.microbatch_sizes;
  RankOptions ro;
  ro.top = b.top;  // by default every survivor
  ro.merge_twins = b.top < (size_t{1} << 30);
  ro.by_lower_bound = true;
  const SearchResult r = SearchStrategies(b.model, space, CostModelOf(sys.value(), dims.value()), ro);
  SimulateOptions so;
  so.system_path = file.path();
  so.network = b.network;
  so.jobs = b.jobs;
  so.stop_when_stable = false;
  so.time_limit_s = b.time_limit_s;
  const std::vector<Simulated> sims = SimulateCandidates(b.model, r.top, so);
  for (size_t i = 0; i < sims.size(); ++i) {
    const Candidate& c = r.top[i];
    const std::string what = "candidate " + std::to_string(c.index) + " (" + StrategyText(c.strategy) + ")";
    if (sims[i].stopped || (!sims[i].done && sims[i].error.empty())) {  // stopped, or not started, at the limit
      ++out.stopped;
      continue;
    }
    if (!sims[i].done) {
      out.violations += what + ": not simulated: " + sims[i].error + "\n";
      continue;
    }
    ++out.simulated;
    out.with_ep += c.strategy.ep > 1 ? 1 : 0;
    const double simulated_s = static_cast<double>(sims[i].iteration_ns) * 1e-9;
    if (simulated_s < c.cost.lower_s) {
      out.violations += what + ": simulated " + std::to_string(sims[i].iteration_ns) + " ns < lower bound " +
                        std::to_string(c.cost.lower_s * 1e9) + " ns\n";
    }
    if (c.cost.lower_s / simulated_s > out.tightest) {
      out.tightest = c.cost.lower_s / simulated_s;
      out.tightest_text = what;
    }
  }
  return out;
}

}  // namespace orrery::gen
