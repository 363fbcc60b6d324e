#include "workload/progress.h"

#include "core/units.h"

namespace orrery {

ProgressMeter::ProgressMeter(Mode mode, std::FILE* out, double delay_s, double interval_s)
    : mode_(mode),
      line_(out, mode == Mode::kTerminal),
      delay_s_(mode == Mode::kLines ? 0 : delay_s),
      interval_s_(interval_s),
      start_(Clock::now()),
      last_(start_) {}

void ProgressMeter::Begin() { start_ = last_ = Clock::now(); }

std::string ProgressMeter::Line(Tick simulated_ns, double events_per_s, int finished, int ranks) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "progress: simulated %.6f ms, %.2f M events/s, ranks finished %d/%d",
                NsToMs(static_cast<double>(simulated_ns)), Millions(events_per_s), finished, ranks);
  return buf;
}

void ProgressMeter::Update(Tick simulated_ns, uint64_t events, int finished, int ranks) {
  if (mode_ == Mode::kOff) return;
  const Clock::time_point now = Clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  if (since_start < delay_s_ || std::chrono::duration<double>(now - last_).count() < interval_s_) return;
  last_ = now;
  line_.Print(Line(simulated_ns, since_start > 0 ? static_cast<double>(events) / since_start : 0, finished, ranks));
}

void ProgressMeter::Finish(Tick simulated_ns, uint64_t events, int finished, int ranks) {
  if (mode_ == Mode::kLines) {
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    line_.Print(Line(simulated_ns, secs > 0 ? static_cast<double>(events) / secs : 0, finished, ranks));
  } else if (mode_ == Mode::kTerminal) {
    line_.Clear();
  }
}

}  // namespace orrery
