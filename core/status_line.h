// One status line on a stream (stderr): on a terminal redrawn in place with
// \r, padded over a longer previous line and erased at the end; otherwise a
// plain line per Print. `orrery run`'s progress meter and `orrery search`'s
// progress both draw through it.
#pragma once
#include <cstdio>
#include <string>

namespace orrery {

class StatusLine {
 public:
  StatusLine(std::FILE* out, bool redraw) : out_(out), redraw_(redraw) {}
  void Print(const std::string& line) {
    if (redraw_) {
      const int pad = width_ > line.size() ? static_cast<int>(width_ - line.size()) : 0;
      std::fprintf(out_, "\r%s%*s", line.c_str(), pad, "");
      width_ = line.size();
    } else {
      std::fprintf(out_, "%s\n", line.c_str());
    }
    std::fflush(out_);
    printed_ = true;
  }
  // A redrawn line, once printed, is erased; plain lines stay.
  void Clear() {
    if (!redraw_ || !printed_) return;
    std::fprintf(out_, "\r%*s\r", static_cast<int>(width_), "");
    std::fflush(out_);
  }

 private:
  std::FILE* out_;
  bool redraw_;
  bool printed_ = false;
  size_t width_ = 0;  // of the last redrawn line
};

}  // namespace orrery
