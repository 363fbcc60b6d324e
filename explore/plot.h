// `orrery plot`: draws a sweep's CSV (a header row; axis columns such as
// `network.dim1.bandwidth_gbps`, metric columns such as `iteration_s`, a
// `status` column whose rows other than `ok` are skipped) through gnuplot.
// BuildPlot makes the gnuplot script and its data as text (deterministic: the
// same CSV and flags give byte-identical files); Plot writes them beside the
// image (OUT.gp, OUT.dat) and runs gnuplot on the script, so a user can
// restyle the script and rerun `gnuplot OUT.gp` in that folder.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "explore/csv.h"

namespace orrery {

struct PlotOptions {
  std::string csv;   // the sweep's CSV
  std::string kind;  // heatmap, lines, stacked, pareto
  std::string x, y, z, series;
  std::string stack;                // comma-separated columns (stacked); empty: the four time categories
  std::string title;                // empty: one made from the columns
  std::string out;                  // OUT.svg or OUT.png
  std::string gnuplot = "gnuplot";  // the program, looked up on PATH
};

struct PlotFiles {
  std::string gp, dat;  // the script and its data
  int marks = 0;        // cells, points or bar segments drawn
  int rows = 0;         // rows plotted
  int skipped = 0;      // rows whose status is not ok
  std::string note;     // for stderr: which rows were skipped, or ""
  std::string report;   // for stdout (pareto: the rows on the front), or ""
};

// The kinds --kind accepts.
const std::vector<std::string>& PlotKinds();
// Checks the flags against the table and builds the script and data; writes nothing.
Result<PlotFiles> BuildPlot(const CsvTable& table, const PlotOptions& options);
// Reads options.csv, writes OUT.gp and OUT.dat beside options.out, and runs gnuplot
// there (a missing gnuplot: exit code 1, naming the Debian package).
Result<PlotFiles> Plot(const PlotOptions& options);
// Runs `program script` with `dir` as its working directory (posix_spawn, no shell);
// the child's stdout goes to our stderr.
Status RunGnuplot(const std::string& program, const std::string& dir, const std::string& script);

}  // namespace orrery
