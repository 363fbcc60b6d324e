#include "workload/progress.h"

#include "core/units.h"

namespace orrery {

ProgressMeter::ProgressMeter(Mode mode, std::FILE* out, double delay_s, double interval_s)
    : mode_(mode),
      out_(out),
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

void ProgressMeter::Print(const std::string& line) {
  if (mode_ == Mode::kLines) {
    std::fprintf(out_, "%s\n", line.c_str());
  } else {
    // Pad over a longer previous line.
    std::fprintf(out_, "\r%s%*s", line.c_str(), width_ > line.size() ? static_cast<int>(width_ - line.size()) : 0, "");
    width_ = line.size();
  }
  std::fflush(out_);
  printed_ = true;
}

void ProgressMeter::Update(Tick simulated_ns, uint64_t events, int finished, int ranks) {
  if (mode_ == Mode::kOff) return;
  const Clock::time_point now = Clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  if (since_start < delay_s_ || std::chrono::duration<double>(now - last_).count() < interval_s_) return;
  last_ = now;
  Print(Line(simulated_ns, since_start > 0 ? static_cast<double>(events) / since_start : 0, finished, ranks));
}

void ProgressMeter::Finish(Tick simulated_ns, uint64_t events, int finished, int ranks) {
  if (mode_ == Mode::kLines) {
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    Print(Line(simulated_ns, secs > 0 ? static_cast<double>(events) / secs : 0, finished, ranks));
  } else if (mode_ == Mode::kTerminal && printed_) {
    std::fprintf(out_, "\r%*s\r", static_cast<int>(width_), "");
    std::fflush(out_);
  }
}

}  // namespace orrery
