// `orrery search`'s progress on stderr (issue 30 part 5): while ranking,
// strategies visited of the total and the symbolic best so far; while
// simulating, candidates done of the total, the best simulated so far and
// how many were stopped. At most one line per interval (1 s); on a terminal
// one line redrawn with \r (cleared at the end), otherwise plain lines.
// Thread-safe: the simulation workers report to one meter.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "core/status_line.h"
#include "core/tick.h"

namespace orrery::gen {

class SearchProgress {
 public:
  enum class Mode { kOff, kTerminal, kLines };
  SearchProgress(Mode mode, std::chrono::steady_clock::time_point start, std::FILE* out = stderr,
                 double interval_s = 1.0);

  // The ranking pass: `visited` of `total` strategies; `best_ms` the symbolic best so far (< 0: none yet).
  void Ranking(uint64_t visited, uint64_t total, double best_ms);
  // The simulations: `done` of `total` finished (`stopped` of them stopped), the best simulated so far (0: none).
  void Simulating(size_t done, size_t total, size_t stopped, Tick best_ns);
  // Clears a terminal line; nothing for plain lines.
  void Finish();

  // The lines, without the line end (elapsed seconds since `start`):
  // "search: ranking 65536 of 1040544 strategies (6 %), symbolic best 25066.431930 ms, 0.4 s"
  // "search: simulated 12 of 100 candidates (1 stopped), best 26491.277609 ms, 14.2 s"
  static std::string RankingLine(uint64_t visited, uint64_t total, double best_ms, double elapsed_s);
  static std::string SimulatingLine(size_t done, size_t total, size_t stopped, Tick best_ns, double elapsed_s);

 private:
  using Clock = std::chrono::steady_clock;
  // Prints when the interval has passed (or `force`); the caller holds mu_.
  void Offer(const std::string& line, bool force);

  Mode mode_;
  Clock::time_point start_, last_;
  StatusLine line_;
  double interval_s_;
  std::mutex mu_;
};

}  // namespace orrery::gen
