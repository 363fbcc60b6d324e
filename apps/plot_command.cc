// `orrery plot FILE.csv --kind=... -o OUT.svg`: the command line of explore/plot.h.
#include <cstdio>
#include <memory>

#include "apps/commands.h"
#include "explore/plot.h"

namespace orrery::cli {

void AddPlotCommand(Commands* commands, CLI::App* root) {
  auto o = std::make_shared<PlotOptions>();
  CLI::App* plot = commands->AddLeaf(
      root, "plot", "draw a sweep's CSV through gnuplot: heatmap, lines, stacked bars or a Pareto front", [o] {
        auto files = Plot(*o);
        if (!files.ok()) return Fail(files.status());
        if (!files->note.empty()) std::fprintf(stderr, "orrery: note: %s\n", files->note.c_str());
        std::fputs(files->report.c_str(), stdout);
        return 0;
      });
  plot->add_option("FILE", o->csv,
                   "the sweep's CSV: a header row, then one row per run (rows whose status is not ok are skipped)")
      ->required();
  plot->add_option("--kind", o->kind,
                   "heatmap (--x, --y, --z), lines (--x, --y, --series), stacked (--x, --stack) or pareto (--x, --y)")
      ->type_name("KIND");
  plot->add_option("--x", o->x,
                   "the column along x (heatmap, lines: an axis; stacked: the bar labels; pareto: a metric)")
      ->type_name("COL");
  plot->add_option("--y", o->y, "heatmap: the axis along y; lines: the metric; pareto: the second metric")
      ->type_name("COL");
  plot->add_option("--z", o->z, "heatmap: the metric shown as colour")->type_name("COL");
  plot->add_option("--series", o->series, "lines: one line per distinct value of this column")->type_name("COL");
  plot->add_option("--stack", o->stack,
                   "stacked: the columns stacked in each bar, bottom first (default: compute_ns,exposed_comm_ns,"
                   "mem_stall_ns,peer_wait_ns,idle_ns)")
      ->type_name("COL,COL,...");
  plot->add_option("--title", o->title, "the plot's title (default: made from the columns)")->type_name("T");
  plot->add_option("-o,--out", o->out, "the image: .svg or .png; OUT.gp (the gnuplot script) and OUT.dat go beside it")
      ->type_name("OUT.svg|OUT.png");
}

}  // namespace orrery::cli
