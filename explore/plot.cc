#include "explore/plot.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/output_file.h"
#include "core/parse.h"
#include "explore/plot_script.h"
#include "extern/json_util.h"

namespace orrery {

namespace {

constexpr double kMaxDouble = std::numeric_limits<double>::max();
constexpr DoubleRange kAnyNumber{-kMaxDouble, kMaxDouble, false};
constexpr DoubleRange kMetricRange{0, kMaxDouble, false};
// Columns a sweep writes that are results, not axes.
const std::set<std::string> kResultColumns = {"finished_ns",     "iteration_s",  "compute_ns",
                                              "exposed_comm_ns", "mem_stall_ns", "peer_wait_ns",
                                              "idle_ns",         "status",       "hash"};
const std::vector<std::string> kDefaultStack = {"compute_ns", "exposed_comm_ns", "mem_stall_ns", "peer_wait_ns",
                                                "idle_ns"};

// The flags each kind takes: required, then optional.
struct KindFlags {
  std::vector<std::string> required, optional;
};
const std::map<std::string, KindFlags>& Kinds() {
  static const std::map<std::string, KindFlags> kKinds = {
      {"heatmap", {{"--x", "--y", "--z"}, {"--title"}}},
      {"lines", {{"--x", "--y"}, {"--series", "--title"}}},
      {"stacked", {{"--x"}, {"--stack", "--title"}}},
      {"pareto", {{"--x", "--y"}, {"--title"}}},
  };
  return kKinds;
}

std::string Describe(const KindFlags& k) {
  std::string s = JoinStrings(k.required, ", ");
  std::vector<std::string> opt;
  for (const auto& f : k.optional) {
    if (f != "--title") opt.push_back(f);
  }
  if (!opt.empty()) s += " and optionally " + JoinStrings(opt, ", ");
  return s;
}

// The row's value of column `col` in messages: `sweep.csv:4: gen.tp = "2"`.
std::string Cell(const CsvTable& t, int row, int col) {
  return t.path + ":" + std::to_string(t.lines[row]) + ": " + t.header[col] + " = \"" + t.rows[row][col] + "\"";
}

std::string Trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// A value in the report: quoted when it holds a space, comma or quote.
std::string Shown(const std::string& v) {
  if (v.find_first_of(" ,\"") == std::string::npos && !v.empty()) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

class Table {
 public:
  Table(const CsvTable& t) : t_(t) {}  // NOLINT

  Result<int> Column(const std::string& flag, const std::string& name) const {
    const int c = t_.Column(name);
    if (c >= 0) return c;
    const std::string close = ClosestMatch(name, t_.header);
    return Status::Invalid(flag + " = \"" + name + "\": no such column in " + t_.path +
                           (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                           "; available: " + JoinStrings(t_.header, ", "));
  }

  // The rows to plot: all, or those whose status is `ok` when there is a status column.
  Status SelectRows(PlotFiles* files) {
    const int status = t_.Column("status");
    int first_bad = -1;
    for (int r = 0; r < static_cast<int>(t_.rows.size()); ++r) {
      if (status < 0 || t_.rows[r][status] == "ok") {
        rows_.push_back(r);
      } else if (first_bad < 0) {
        first_bad = r;
      }
    }
    files->rows = static_cast<int>(rows_.size());
    files->skipped = static_cast<int>(t_.rows.size() - rows_.size());
    if (first_bad >= 0) {
      files->note = "plot: skipped " + std::to_string(files->skipped) + " of " + std::to_string(t_.rows.size()) +
                    " row(s) whose status is not ok (first: " + Cell(t_, first_bad, status) + ")";
    }
    if (!rows_.empty()) return Status::Ok();
    if (t_.rows.empty())
      return Status::Invalid(t_.path + ": no rows below the header; allowed: at least one row to plot");
    return Status::Invalid(t_.path + ": none of its " + std::to_string(t_.rows.size()) +
                           " row(s) has status ok (first: " + Cell(t_, first_bad, status) +
                           "); allowed: at least one row with status ok");
  }
  const std::vector<int>& rows() const { return rows_; }
  const CsvTable& csv() const { return t_; }

  // A metric: every plotted row's value is a number >= 0.
  Result<std::vector<double>> Metric(int col) const {
    std::vector<double> v;
    for (int r : rows_) {
      auto x = ParseDouble(t_.rows[r][col], Where{t_.path, t_.lines[r], t_.header[col]}, kMetricRange);
      if (!x.ok()) return x.status();
      v.push_back(x.value());
    }
    return v;
  }

  // An axis: numeric when every value is a number (sorted ascending), else
  // categorical (in order of first appearance); pos[i] is row i's place.
  Axis MakeAxis(int col) const {
    Axis a;
    a.column = t_.header[col];
    std::vector<double> values;
    a.numeric = true;
    for (int r : rows_) {
      auto x = ParseDouble(t_.rows[r][col], Where{}, kAnyNumber);
      if (!x.ok()) {
        a.numeric = false;
        break;
      }
      values.push_back(x.value());
    }
    if (a.numeric) {
      std::map<double, std::string> distinct;
      for (size_t i = 0; i < values.size(); ++i) distinct.emplace(values[i], Trimmed(t_.rows[rows_[i]][col]));
      std::map<double, int> index;
      for (const auto& [v, label] : distinct) {
        index[v] = static_cast<int>(a.labels.size());
        a.labels.push_back(label);
        a.values.push_back(v);
      }
      for (double v : values) a.pos.push_back(index[v]);
      return a;
    }
    std::map<std::string, int> index;
    for (int r : rows_) {
      const std::string& s = t_.rows[r][col];
      auto [it, fresh] = index.emplace(s, static_cast<int>(a.labels.size()));
      if (fresh) a.labels.push_back(s);
      a.pos.push_back(it->second);
    }
    for (size_t i = 0; i < a.labels.size(); ++i) a.values.push_back(static_cast<double>(i));
    return a;
  }

  // Two plotted rows (indices into rows()) that land on the same mark: the error
  // names both lines, the shared values and the axis columns in which they differ.
  Status Collision(const std::string& kind, int i, int j, const std::vector<int>& same, const std::string& hint) const {
    const int a = rows_[i], b = rows_[j];
    std::string shared;
    for (int c : same) shared += (shared.empty() ? "" : ", ") + t_.header[c] + " = \"" + t_.rows[a][c] + "\"";
    std::vector<std::string> differ;
    for (int c = 0; c < static_cast<int>(t_.header.size()); ++c) {
      if (!kResultColumns.count(t_.header[c]) && t_.rows[a][c] != t_.rows[b][c]) differ.push_back(t_.header[c]);
    }
    return Status::Invalid(t_.path + ":" + std::to_string(t_.lines[a]) + " and " + t_.path + ":" +
                           std::to_string(t_.lines[b]) + " both have " + shared + ": --kind=" + kind + " " + hint +
                           (differ.empty() ? "" : "; they differ in " + JoinStrings(differ, ", ")) +
                           "; allowed: one row per mark (filter the CSV" +
                           (kind == "lines" ? ", or pass --series=COL" : "") + ")");
  }

 private:
  const CsvTable& t_;
  std::vector<int> rows_;
};

Result<std::vector<std::string>> SplitStack(const std::string& text) {
  if (text.empty()) return kDefaultStack;
  std::vector<std::string> cols;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) {
      return Status::Invalid("--stack = \"" + text + "\": an empty column name; allowed: COL,COL,... (e.g. " +
                             JoinStrings(kDefaultStack, ",") + ")");
    }
    if (std::find(cols.begin(), cols.end(), name) != cols.end()) {
      return Status::Invalid("--stack = \"" + text + "\": column \"" + name + "\" twice; allowed: each column once");
    }
    cols.push_back(name);
    if (comma == std::string::npos) return cols;
    start = comma + 1;
  }
}

Status CheckOptions(const PlotOptions& o) {
  if (o.out.empty()) {
    return Status::Invalid(
        "'orrery plot' needs -o OUT.svg or -o OUT.png (the image to write; OUT.gp and OUT.dat go "
        "beside it)");
  }
  const std::string ext = std::filesystem::path(o.out).extension().string();
  if (ext != ".svg" && ext != ".png") {
    return Status::Invalid("-o = \"" + o.out + "\": unknown image type \"" + ext + "\"; allowed: OUT.svg, OUT.png");
  }
  if (std::filesystem::path(o.out).stem().empty()) {
    return Status::Invalid("-o = \"" + o.out + "\": no file name before the extension; allowed: OUT.svg, OUT.png");
  }
  if (o.kind.empty()) return Status::Invalid("'orrery plot' needs --kind=" + JoinStrings(PlotKinds(), "|"));
  const auto kind = Kinds().find(o.kind);
  if (kind == Kinds().end()) {
    const std::string close = ClosestMatch(o.kind, PlotKinds());
    return Status::Invalid("--kind = \"" + o.kind + "\": unknown kind" +
                           (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                           "; allowed: " + JoinStrings(PlotKinds(), ", "));
  }
  const std::vector<std::pair<std::string, const std::string*>> given = {
      {"--x", &o.x}, {"--y", &o.y}, {"--z", &o.z}, {"--series", &o.series}, {"--stack", &o.stack}};
  for (const auto& [flag, value] : given) {
    const auto& k = kind->second;
    const bool req = std::count(k.required.begin(), k.required.end(), flag) > 0;
    const bool opt = std::count(k.optional.begin(), k.optional.end(), flag) > 0;
    if (req && value->empty()) {
      return Status::Invalid("--kind=" + o.kind + " needs " + flag + "=COL; it takes " + Describe(k));
    }
    if (!req && !opt && !value->empty()) {
      return Status::Invalid(flag + " = \"" + *value + "\": not used by --kind=" + o.kind + ", which takes " +
                             Describe(k));
    }
  }
  return Status::Ok();
}

// The columns the flags name (-1: not given); --stack's in its order.
struct PlotColumns {
  int x = -1, y = -1, z = -1, series = -1;
  std::vector<int> stack;
};

Result<PlotColumns> ResolveColumns(const Table& t, const PlotOptions& o) {
  PlotColumns c;
  if (!o.x.empty()) {
    ORRERY_PARSE_OR_RETURN(c.x, t.Column("--x", o.x));
  }
  if (!o.y.empty()) {
    ORRERY_PARSE_OR_RETURN(c.y, t.Column("--y", o.y));
  }
  if (!o.z.empty()) {
    ORRERY_PARSE_OR_RETURN(c.z, t.Column("--z", o.z));
  }
  if (!o.series.empty()) {
    ORRERY_PARSE_OR_RETURN(c.series, t.Column("--series", o.series));
  }
  if (o.kind == "stacked") {
    std::vector<std::string> names;
    ORRERY_PARSE_OR_RETURN(names, SplitStack(o.stack));
    for (const auto& n : names) {
      // A sweep CSV written before the peer_wait_ns column existed: the default stack skips it.
      if (o.stack.empty() && n == "peer_wait_ns" &&
          std::find(t.csv().header.begin(), t.csv().header.end(), n) == t.csv().header.end()) {
        continue;
      }
      int col = -1;
      ORRERY_PARSE_OR_RETURN(col, t.Column("--stack", n));
      c.stack.push_back(col);
    }
  }
  return c;
}

Status DrawHeatmap(const Table& t, const PlotColumns& c, ScriptWriter* script, PlotFiles* files) {
  const CsvTable& csv = t.csv();
  const int n = static_cast<int>(t.rows().size());
  const Axis ax = t.MakeAxis(c.x), ay = t.MakeAxis(c.y);
  std::vector<double> zv;
  ORRERY_PARSE_OR_RETURN(zv, t.Metric(c.z));
  std::map<std::pair<int, int>, int> cell;
  for (int i = 0; i < n; ++i) {
    auto [it, fresh] = cell.emplace(std::make_pair(ax.pos[i], ay.pos[i]), i);
    if (!fresh) return t.Collision("heatmap", it->second, i, {c.x, c.y}, "draws one cell per (x, y)");
  }
  std::vector<HeatCell> cells;
  for (const auto& [xy, i] : cell) cells.push_back({xy.first, xy.second, zv[i], csv.lines[t.rows()[i]]});
  script->Heatmap(ax, ay, csv.header[c.z], cells);
  files->marks = n;
  return Status::Ok();
}

Status DrawLines(const Table& t, const PlotColumns& c, ScriptWriter* script, PlotFiles* files) {
  const CsvTable& csv = t.csv();
  const int n = static_cast<int>(t.rows().size());
  const Axis ax = t.MakeAxis(c.x);
  std::vector<double> yv;
  ORRERY_PARSE_OR_RETURN(yv, t.Metric(c.y));
  Axis as;
  if (c.series >= 0) {
    as = t.MakeAxis(c.series);
  } else {
    as.labels = {""};
    as.pos.assign(n, 0);
  }
  std::vector<Line> lines(as.labels.size());
  std::vector<std::map<int, int>> seen(as.labels.size());  // x position -> point
  for (int i = 0; i < n; ++i) {
    auto [it, fresh] = seen[as.pos[i]].emplace(ax.pos[i], i);
    if (!fresh) {
      std::vector<int> same = {c.x};
      if (c.series >= 0) same.push_back(c.series);
      return t.Collision("lines", it->second, i, same, "draws one point per x in each series");
    }
  }
  for (size_t s = 0; s < lines.size(); ++s) {
    lines[s].title = c.series >= 0 ? as.labels[s] : "";
    for (const auto& [pos, i] : seen[s]) lines[s].points.push_back({ax.values[pos], yv[i], csv.lines[t.rows()[i]]});
  }
  script->Lines(ax, csv.header[c.y], lines);
  files->marks = n;
  return Status::Ok();
}

Status DrawStacked(const Table& t, const PlotColumns& c, ScriptWriter* script, PlotFiles* files) {
  const CsvTable& csv = t.csv();
  std::vector<std::string> names, labels;
  std::vector<std::vector<double>> values;  // per layer, per bar
  for (int col : c.stack) {
    names.push_back(csv.header[col]);
    values.emplace_back();
    ORRERY_PARSE_OR_RETURN(values.back(), t.Metric(col));
  }
  std::vector<int> lines;
  for (int r : t.rows()) {
    labels.push_back(csv.rows[r][c.x]);
    lines.push_back(csv.lines[r]);
  }
  script->Stacked(csv.header[c.x], labels, names, values, lines);
  files->marks = static_cast<int>(t.rows().size()) * static_cast<int>(c.stack.size());
  return Status::Ok();
}

// The points (indices) on the Pareto front of minimising both x and y, by x then y.
std::vector<int> ParetoFront(const std::vector<double>& xv, const std::vector<double>& yv) {
  std::vector<int> order(xv.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return std::make_pair(xv[a], yv[a]) < std::make_pair(xv[b], yv[b]); });
  // Sorted by x then y, a point is on the front when no earlier point has a
  // y as small (an equal point is kept: neither dominates the other).
  std::vector<int> front;
  for (int i : order) {
    if (front.empty() || yv[i] < yv[front.back()] || (xv[i] == xv[front.back()] && yv[i] == yv[front.back()])) {
      front.push_back(i);
    }
  }
  return front;
}

// The report's lines: each front row's x, y and its axis columns.
std::string ParetoReport(const Table& t, const PlotColumns& c, const std::vector<int>& front) {
  const CsvTable& csv = t.csv();
  std::string report = "pareto front of " + csv.path + ": " + std::to_string(front.size()) + " of " +
                       std::to_string(t.rows().size()) + " row(s), minimising " + csv.header[c.x] + " and " +
                       csv.header[c.y] + "\n";
  for (int i : front) {
    const int r = t.rows()[i];
    std::string axes;
    for (size_t col = 0; col < csv.header.size(); ++col) {
      const bool axis = !kResultColumns.count(csv.header[col]) && static_cast<int>(col) != c.x &&
                        static_cast<int>(col) != c.y;
      if (axis) axes += " " + csv.header[col] + "=" + Shown(csv.rows[r][col]);
    }
    report += "  line " + std::to_string(csv.lines[r]) + ": " + csv.header[c.x] + "=" + Shown(csv.rows[r][c.x]) + " " +
              csv.header[c.y] + "=" + Shown(csv.rows[r][c.y]) + (axes.empty() ? "" : " |" + axes) + "\n";
  }
  return report;
}

Status DrawPareto(const Table& t, const PlotColumns& c, ScriptWriter* script, PlotFiles* files) {
  const CsvTable& csv = t.csv();
  const int n = static_cast<int>(t.rows().size());
  std::vector<double> xv, yv;
  ORRERY_PARSE_OR_RETURN(xv, t.Metric(c.x));
  ORRERY_PARSE_OR_RETURN(yv, t.Metric(c.y));
  const std::vector<int> front = ParetoFront(xv, yv);
  std::vector<Point> all, best;
  for (int i = 0; i < n; ++i) all.push_back({xv[i], yv[i], csv.lines[t.rows()[i]]});
  for (int i : front) best.push_back({xv[i], yv[i], csv.lines[t.rows()[i]]});
  script->Pareto(csv.header[c.x], csv.header[c.y], all, best);
  files->marks = n + static_cast<int>(front.size());
  files->report = ParetoReport(t, c, front);
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& PlotKinds() {
  static const std::vector<std::string> kNames = {"heatmap", "lines", "stacked", "pareto"};
  return kNames;
}

Result<PlotFiles> BuildPlot(const CsvTable& csv, const PlotOptions& o) {
  ORRERY_RETURN_IF_ERROR(CheckOptions(o));
  Table t(csv);
  PlotFiles files;
  // Columns first (a misspelled flag is reported before any row), then rows.
  PlotColumns c;
  ORRERY_PARSE_OR_RETURN(c, ResolveColumns(t, o));
  ORRERY_RETURN_IF_ERROR(t.SelectRows(&files));
  ScriptWriter script(o);
  if (o.kind == "heatmap") {
    ORRERY_RETURN_IF_ERROR(DrawHeatmap(t, c, &script, &files));
  } else if (o.kind == "lines") {
    ORRERY_RETURN_IF_ERROR(DrawLines(t, c, &script, &files));
  } else if (o.kind == "stacked") {
    ORRERY_RETURN_IF_ERROR(DrawStacked(t, c, &script, &files));
  } else {
    ORRERY_RETURN_IF_ERROR(DrawPareto(t, c, &script, &files));
  }
  files.gp = script.gp();
  files.dat = script.dat();
  return files;
}

}  // namespace orrery

namespace orrery {

Status RunGnuplot(const std::string& program, const std::string& dir, const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);  // our stdout is the report
  std::string arg0 = program, arg1 = script;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT) {
    return Status::Env("cannot run '" + program +
                       "': not found on PATH; orrery plot draws through gnuplot: install "
                       "Debian's gnuplot-nox (apt-get install gnuplot-nox), or run 'gnuplot " +
                       script + "' in " + dir + " later (the script and its data are written)");
  }
  if (rc != 0) return Status::Env("cannot run '" + program + "': " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::Env("waiting for gnuplot: " + std::string(std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Env("gnuplot failed on " + (std::filesystem::path(dir) / script).string() + " (" +
                       (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                          : "signal " + std::to_string(WTERMSIG(status))) +
                       "; its messages are above)");
  }
  return Status::Ok();
}

Result<PlotFiles> Plot(const PlotOptions& o) {
  ORRERY_RETURN_IF_ERROR(CheckOptions(o));
  auto csv = ReadCsv(o.csv);
  if (!csv.ok()) return csv.status();
  auto files = BuildPlot(csv.value(), o);
  if (!files.ok()) return files.status();
  const std::filesystem::path out(o.out);
  const std::filesystem::path dir = out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path();
  const std::string stem = out.stem().string();
  ORRERY_RETURN_IF_ERROR(CheckOutputsAreNotInputs({{"-o", o.out},
                                                   {"-o's gnuplot script", (dir / (stem + ".gp")).string()},
                                                   {"-o's data", (dir / (stem + ".dat")).string()}},
                                                  {{"FILE", o.csv}}));
  for (const auto& [name, text] :
       {std::make_pair(stem + ".gp", &files->gp), std::make_pair(stem + ".dat", &files->dat)}) {
    const std::string path = (dir / name).string();
    ORRERY_RETURN_IF_ERROR(WriteFileWhole(path, *text).Prefixed("-o = \"" + o.out + "\": "));
  }
  std::error_code ec;
  std::filesystem::remove(out, ec);  // an image left by an earlier run must not pass for this one
  ORRERY_RETURN_IF_ERROR(RunGnuplot(o.gnuplot, dir.string(), stem + ".gp"));
  if (!std::filesystem::exists(out)) {
    return Status::Env("gnuplot ran " + (dir / (stem + ".gp")).string() + " but wrote no " + o.out);
  }
  return files;
}

}  // namespace orrery
