#include "explore/plot_script.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "extern/json_util.h"

namespace orrery {

namespace {

// Colours of the stacked layers (matplotlib's tab10), then grey.
const char* const kLayerColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Int(int v) { return std::to_string(v); }

// Text for a comment line of the data file: line breaks become spaces.
std::string OneLine(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return s;
}

// `set xtics ('a' 0, 'b' 1)`, rotated when the labels would collide.
std::string Tics(const std::string& axis, const std::vector<std::string>& labels) {
  std::string s = "set " + axis + "tics (";
  size_t longest = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    s += (i ? ", " : "") + GnuplotQuote(labels[i]) + " " + Int(static_cast<int>(i));
    longest = std::max(longest, labels[i].size());
  }
  s += ")";
  if (axis == "x" && labels.size() * std::max<size_t>(longest, 1) > 80) s += " rotate by -35 left";
  return s + "\n";
}

// "($2+$3)": the sum of data columns [from, to).
std::string ColumnSum(int from, int to) {
  if (from >= to) return "(0)";
  std::string s = "(";
  for (int c = from; c < to; ++c) s += (c > from ? "+$" : "$") + Int(c);
  return s + ")";
}

}  // namespace

std::string GnuplotQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "''";
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShortestNumber(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  return std::string(buf, r.ptr);
}

ScriptWriter::ScriptWriter(const PlotOptions& options) : o_(options) {
  dat_name_ = std::filesystem::path(o_.out).stem().string() + ".dat";
}

void ScriptWriter::Header(const std::string& default_title, const std::string& xlabel, const std::string& ylabel) {
  const std::filesystem::path out(o_.out);
  const bool svg = out.extension() == ".svg";
  std::string flags = " --kind=" + o_.kind;
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"x", o_.x}, {"y", o_.y}, {"z", o_.z}, {"series", o_.series}, {"stack", o_.stack}}) {
    if (!value.empty()) flags += " --" + name + "=" + value;
  }
  gp_ = OneLine("# orrery plot " + std::filesystem::path(o_.csv).filename().string() + flags) + "\n" +
        "# Rerun in this folder after editing: gnuplot " + out.stem().string() + ".gp\n" + "# Data: " + dat_name_ +
        " (the last column of each line is the CSV line it comes from)\n";
  gp_ += svg ? "set terminal svg size 960,600 noenhanced font 'Arial,12' background rgb 'white'\n"
             : "set terminal pngcairo size 960,600 noenhanced font 'Arial,11' background rgb 'white'\n";
  gp_ += "set output " + GnuplotQuote(out.filename().string()) + "\n";
  gp_ += "set title " + GnuplotQuote(o_.title.empty() ? default_title : o_.title) + "\n";
  gp_ += "set xlabel " + GnuplotQuote(xlabel) + "\n";
  gp_ += "set ylabel " + GnuplotQuote(ylabel) + "\n";
}

void ScriptWriter::Heatmap(const Axis& x, const Axis& y, const std::string& z, const std::vector<HeatCell>& cells) {
  Header(z + " over " + x.column + " and " + y.column, x.column, y.column);
  gp_ += "set xrange [-0.5:" + Int(static_cast<int>(x.labels.size())) + "-0.5]\n";
  gp_ += "set yrange [-0.5:" + Int(static_cast<int>(y.labels.size())) + "-0.5]\n";
  gp_ += Tics("x", x.labels) + Tics("y", y.labels);
  gp_ += "set cblabel " + GnuplotQuote(z) + "\n";
  gp_ += "set rmargin 14\n";
  gp_ += "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n";
  gp_ += "set style fill solid 1.0 noborder\n";
  gp_ += "unset key\n";
  gp_ += OneLine("# one cell per line of the data: x index, y index, " + z) + "\n";
  gp_ += "plot " + GnuplotQuote(dat_name_) + " using 1:2:(0.5):(0.5):3 with boxxyerror fillcolor palette notitle\n";
  dat_ = OneLine("# x index (" + x.column + "), y index (" + y.column + "), " + z + ", CSV line") + "\n";
  for (const HeatCell& c : cells) {
    dat_ += Int(c.xi) + " " + Int(c.yi) + " " + ShortestNumber(c.z) + " " + Int(c.line) + "\n";
  }
}

void ScriptWriter::Lines(const Axis& x, const std::string& y, const std::vector<Line>& lines) {
  const bool named = !o_.series.empty();
  Header(y + " over " + x.column + (named ? " by " + o_.series : ""), x.column, y);
  if (!x.numeric) {
    gp_ += "set xrange [-0.5:" + Int(static_cast<int>(x.labels.size())) + "-0.5]\n";
    gp_ += Tics("x", x.labels);
  }
  gp_ += "set grid\n";
  gp_ += "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n";
  gp_ += named ? "set key outside right top title " + GnuplotQuote(o_.series) + "\n" : "unset key\n";
  gp_ += "plot ";
  for (size_t i = 0; i < lines.size(); ++i) {
    gp_ += i ? std::string(", \\\n     '' ") : GnuplotQuote(dat_name_) + " ";
    gp_ += "index " + Int(static_cast<int>(i)) + " using 1:2 with linespoints pointtype 7 ";
    gp_ += lines[i].title.empty() ? std::string("notitle") : "title " + GnuplotQuote(lines[i].title);
  }
  gp_ += "\n";
  dat_ = OneLine("# " + x.column + (x.numeric ? "" : " (index)") + ", " + y + ", CSV line; one block per series" +
                 (named ? " (" + o_.series + ")" : std::string())) +
         "\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) dat_ += "\n\n";
    if (!lines[i].title.empty()) dat_ += "# " + OneLine(lines[i].title) + "\n";
    for (const Point& p : lines[i].points) {
      dat_ += ShortestNumber(p.x) + " " + ShortestNumber(p.y) + " " + Int(p.line) + "\n";
    }
  }
}

void ScriptWriter::Stacked(const std::string& x, const std::vector<std::string>& labels,
                           const std::vector<std::string>& layers, const std::vector<std::vector<double>>& values,
                           const std::vector<int>& lines) {
  bool ns = true;
  for (const auto& l : layers) ns = ns && l.size() > 3 && l.compare(l.size() - 3, 3, "_ns") == 0;
  Header(JoinStrings(layers, " + ") + " per " + x, x, ns ? "ns" : JoinStrings(layers, " + "));
  gp_ += "set xrange [-0.6:" + Int(static_cast<int>(labels.size())) + "-0.4]\n";
  gp_ += "set yrange [0:*]\n";
  gp_ += Tics("x", labels);
  gp_ += "set grid ytics\n";
  gp_ += "set style fill solid 1.0 noborder\n";
  gp_ += "set key outside right top\n";
  gp_ += "# one bar per line of the data: position, then one column per layer (bottom first)\n";
  gp_ += "plot ";
  const int n = static_cast<int>(layers.size());
  for (int k = 0; k < n; ++k) {
    // boxxyerror: x y xlow xhigh ylow yhigh; layer k spans columns 2..k+1 to 2..k+2.
    gp_ += k ? std::string(", \\\n     '' ") : GnuplotQuote(dat_name_) + " ";
    gp_ += "using 1:(0):($1-0.4):($1+0.4):";
    gp_ += ColumnSum(2, 2 + k);
    gp_ += ":";
    gp_ += ColumnSum(2, 3 + k);
    gp_ += " with boxxyerror fillcolor rgb '" + std::string(kLayerColours[k % 10]) + "' title " +
           GnuplotQuote(layers[k]);
  }
  gp_ += "\n";
  dat_ = OneLine("# position (" + x + "), " + JoinStrings(layers, ", ") + ", CSV line") + "\n";
  for (size_t b = 0; b < labels.size(); ++b) {
    dat_ += Int(static_cast<int>(b));
    for (int k = 0; k < n; ++k) {
      dat_ += ' ';
      dat_ += ShortestNumber(values[k][b]);
    }
    dat_ += ' ';
    dat_ += Int(lines[b]);
    dat_ += '\n';
  }
}

void ScriptWriter::Pareto(const std::string& x, const std::string& y, const std::vector<Point>& all,
                          const std::vector<Point>& front) {
  Header("Pareto front of " + x + " and " + y + " (both minimised)", x, y);
  gp_ += "set grid\n";
  gp_ += "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n";
  gp_ += "set key below\n";
  gp_ += "plot " + GnuplotQuote(dat_name_) +
         " index 0 using 1:2 with points pointtype 7 pointsize 0.8 linecolor rgb '#7f7f7f' title " +
         GnuplotQuote("rows (" + Int(static_cast<int>(all.size())) + ")") + ", \\\n" +
         "     '' index 1 using 1:2 with linespoints pointtype 7 pointsize 1.2 linewidth 2 linecolor rgb '#d62728' "
         "title " +
         GnuplotQuote("Pareto front (" + Int(static_cast<int>(front.size())) + ")") + "\n";
  dat_ = OneLine("# " + x + ", " + y + ", CSV line: every row") + "\n";
  for (const Point& p : all) dat_ += ShortestNumber(p.x) + " " + ShortestNumber(p.y) + " " + Int(p.line) + "\n";
  dat_ += "\n\n" + OneLine("# the Pareto front, ascending " + x) + "\n";
  for (const Point& p : front) dat_ += ShortestNumber(p.x) + " " + ShortestNumber(p.y) + " " + Int(p.line) + "\n";
}

}  // namespace orrery
