// Fuzz target: the strict CSV reader (explore/csv.h) and what `orrery plot`
// checks and builds from an accepted table (explore/plot.h, BuildPlot: the
// columns the flags name, the rows, the script and data as text; gnuplot is
// never run). The flags name the header's columns: the first as x, the next
// ones as y, z and series, the last two as the stack.
#include <cstddef>
#include <cstdint>

#include "explore/csv.h"
#include "explore/plot.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string path = fuzz::WriteInput("table.csv", data, size);
  auto table = ReadCsv(path);
  fuzz::Note("csv", table.status());
  if (!table.ok()) return 0;
  const std::vector<std::string>& h = table->header;
  auto col = [&h](size_t i) { return h[i % h.size()]; };
  for (const std::string& kind : PlotKinds()) {
    PlotOptions o;
    o.csv = path;
    o.out = fuzz::Scratch() + "/plot.svg";
    o.kind = kind;
    o.x = col(0);
    if (kind != "stacked") o.y = col(1);
    if (kind == "heatmap") o.z = col(2);
    fuzz::Note(kind, BuildPlot(table.value(), o).status());
    if (kind == "lines") {
      o.series = col(3);
    } else if (kind == "stacked") {
      o.stack = col(h.size() - 2) + "," + col(h.size() - 1);
    } else {
      continue;
    }
    fuzz::Note(kind, BuildPlot(table.value(), o).status());
  }
  return 0;
}
