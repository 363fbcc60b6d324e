#include "explore/search_progress.h"

#include "core/units.h"

namespace orrery::gen {

SearchProgress::SearchProgress(Mode mode, Clock::time_point start, std::FILE* out, double interval_s)
    : mode_(mode), start_(start), last_(start), line_(out, mode == Mode::kTerminal), interval_s_(interval_s) {}

std::string SearchProgress::RankingLine(uint64_t visited, uint64_t total, double best_ms, double elapsed_s) {
  char buf[200];
  const double pct = total > 0 ? 100.0 * static_cast<double>(visited) / static_cast<double>(total) : 0;
  if (best_ms < 0) {
    std::snprintf(buf, sizeof buf, "search: ranking %llu of %llu strategies (%.0f %%), no survivor yet, %.1f s",
                  static_cast<unsigned long long>(visited), static_cast<unsigned long long>(total), pct, elapsed_s);
  } else {
    std::snprintf(buf, sizeof buf, "search: ranking %llu of %llu strategies (%.0f %%), symbolic best %.6f ms, %.1f s",
                  static_cast<unsigned long long>(visited), static_cast<unsigned long long>(total), pct, best_ms,
                  elapsed_s);
  }
  return buf;
}

std::string SearchProgress::SimulatingLine(size_t done, size_t total, size_t stopped, Tick best_ns, double elapsed_s) {
  char buf[200];
  const std::string stop = stopped > 0 ? " (" + std::to_string(stopped) + " stopped)" : "";
  if (best_ns == 0) {
    std::snprintf(buf, sizeof buf, "search: simulated %zu of %zu candidates%s, none finished yet, %.1f s", done, total,
                  stop.c_str(), elapsed_s);
  } else {
    std::snprintf(buf, sizeof buf, "search: simulated %zu of %zu candidates%s, best %.6f ms, %.1f s", done, total,
                  stop.c_str(), NsToMs(static_cast<double>(best_ns)), elapsed_s);
  }
  return buf;
}

void SearchProgress::Offer(const std::string& line, bool force) {
  const Clock::time_point now = Clock::now();
  if (!force && std::chrono::duration<double>(now - last_).count() < interval_s_) return;
  last_ = now;
  line_.Print(line);
}

void SearchProgress::Ranking(uint64_t visited, uint64_t total, double best_ms) {
  if (mode_ == Mode::kOff) return;
  std::lock_guard<std::mutex> lock(mu_);
  Offer(RankingLine(visited, total, best_ms, std::chrono::duration<double>(Clock::now() - start_).count()), false);
}

void SearchProgress::Simulating(size_t done, size_t total, size_t stopped, Tick best_ns) {
  if (mode_ == Mode::kOff) return;
  std::lock_guard<std::mutex> lock(mu_);
  Offer(SimulatingLine(done, total, stopped, best_ns, std::chrono::duration<double>(Clock::now() - start_).count()),
        false);
}

void SearchProgress::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  line_.Clear();
}

}  // namespace orrery::gen
