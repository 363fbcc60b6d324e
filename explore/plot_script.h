// The gnuplot script and data file of one `orrery plot`: plain text, built in
// memory, byte-identical for the same inputs. Marks sit at numeric positions;
// categorical axes (and every heatmap axis) place values at 0, 1, 2, ... and
// label the tics with the CSV's text.
#pragma once
#include <string>
#include <vector>

#include "explore/plot.h"

namespace orrery {

// One axis column over the plotted rows.
struct Axis {
  std::string column;
  bool numeric = false;             // every value is a number
  std::vector<std::string> labels;  // distinct values as written (numeric: ascending; else first appearance)
  std::vector<double> values;       // numeric: the distinct values; categorical: 0, 1, ...
  std::vector<int> pos;             // per plotted row: its index in labels
};

struct Point {
  double x = 0, y = 0;
  int line = 0;  // the CSV line it comes from
};
struct HeatCell {
  int xi = 0, yi = 0;
  double z = 0;
  int line = 0;
};
struct Line {
  std::string title;          // "" for a single unnamed line
  std::vector<Point> points;  // ascending x
};

class ScriptWriter {
 public:
  explicit ScriptWriter(const PlotOptions& options);
  void Heatmap(const Axis& x, const Axis& y, const std::string& z, const std::vector<HeatCell>& cells);
  void Lines(const Axis& x, const std::string& y, const std::vector<Line>& lines);
  void Stacked(const std::string& x, const std::vector<std::string>& labels, const std::vector<std::string>& layers,
               const std::vector<std::vector<double>>& values, const std::vector<int>& lines);
  void Pareto(const std::string& x, const std::string& y, const std::vector<Point>& all,
              const std::vector<Point>& front);
  const std::string& gp() const { return gp_; }
  const std::string& dat() const { return dat_; }

 private:
  void Header(const std::string& default_title, const std::string& xlabel, const std::string& ylabel);
  const PlotOptions& o_;
  std::string dat_name_;
  std::string gp_, dat_;
};

// A gnuplot single-quoted string: ' doubled, line breaks and tabs become spaces.
std::string GnuplotQuote(const std::string& s);
// The shortest text that reads back as `v` (std::to_chars, general format: 0.0009, 1e+20).
std::string ShortestNumber(double v);

}  // namespace orrery
