// A progress line on stderr for long runs (`orrery run`): simulated time
// reached, events per second, ranks finished. The event loop calls Update
// every kEventsPerCheck events, so the wall clock is read rarely; the meter
// prints at most twice a second.
//
// Modes: kTerminal (stderr is a TTY) stays silent for the first ~2 s, then
// rewrites one line with \r and clears it at the end; kLines (--progress)
// prints a line per update from the start and a last one at the end, each
// ending in \n (for logs and tests). kOff prints nothing.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/status_line.h"
#include "core/tick.h"

namespace orrery {

class ProgressMeter {
 public:
  enum class Mode { kOff, kTerminal, kLines };
  static constexpr uint64_t kEventsPerCheck = 1 << 14;

  // `out`: where the lines go (stderr). `delay_s`: kTerminal's silence at the start.
  explicit ProgressMeter(Mode mode, std::FILE* out = stderr, double delay_s = 2.0, double interval_s = 0.5);

  bool enabled() const { return mode_ != Mode::kOff; }
  // The event loop starts: rates and kTerminal's delay count from here.
  void Begin();
  // The loop's report: simulated time, events run so far, ranks finished of `ranks` simulated.
  void Update(Tick simulated_ns, uint64_t events, int finished, int ranks);
  // The run ended: kTerminal clears its line, kLines prints a last one.
  void Finish(Tick simulated_ns, uint64_t events, int finished, int ranks);

  // One progress line, without the line end:
  // "progress: simulated 1.234567 ms, 2.50 M events/s, ranks finished 3/8".
  static std::string Line(Tick simulated_ns, double events_per_s, int finished, int ranks);

 private:
  using Clock = std::chrono::steady_clock;
  Mode mode_;
  StatusLine line_;
  double delay_s_, interval_s_;
  Clock::time_point start_, last_;
};

}  // namespace orrery
