// `orrery report compare`: the rows (fixed order) and their text, JSON and CSV.
#include "report/compare.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "core/units.h"

namespace orrery {

namespace {

struct Row {
  std::string section, label, unit;  // unit: ns, bytes, count, fraction
  std::optional<double> a, b;
  int decimals = 0;
  std::string change;  // a category the largest change may name ("" otherwise)
};

constexpr int kSplit = 5;
constexpr const char* kSplitNames[kSplit] = {"compute", "exposed communication", "memory stall", "waiting on peers",
                                             "idle"};

// Critical-path categories in a fixed order: compute, communication (plain, then
// by dimension), memory, waiting on another rank, idle, anything else by name.
int CategoryOrder(const std::string& c) {
  if (c == "compute") return 0;
  if (c.rfind("communication", 0) == 0) return 1;
  if (c == "memory") return 2;
  if (c == "waiting on another rank") return 3;
  if (c == "idle") return 4;
  return 5;
}

std::vector<Row> BuildRows(const ReportSummary& a, const ReportSummary& b) {
  std::vector<Row> rows;
  auto add = [&](const std::string& section, const std::string& label, const std::string& unit, std::optional<double> x,
                 std::optional<double> y, int decimals = 0, const std::string& change = "") {
    rows.push_back(Row{section, label, unit, x, y, decimals, change});
  };
  add("time", "finished (max over ranks)", "ns", a.finished, b.finished);
  for (int k = 0; k < kSplit; ++k) {
    add("time", std::string("slowest rank: ") + kSplitNames[k], "ns", a.slow[k], b.slow[k], 0,
        std::string(kSplitNames[k]) + " (slowest rank)");
  }
  for (int k = 0; k < kSplit; ++k)
    add("time", std::string("mean over ranks: ") + kSplitNames[k], "ns", a.mean[k], b.mean[k], 1);
  if (a.has_path && b.has_path) {
    std::vector<std::string> cats;
    for (const auto* s : {&a, &b}) {
      for (const auto& [c, ns] : s->path) cats.push_back(c);
    }
    std::sort(cats.begin(), cats.end(), [](const std::string& x, const std::string& y) {
      return CategoryOrder(x) != CategoryOrder(y) ? CategoryOrder(x) < CategoryOrder(y) : x < y;
    });
    cats.erase(std::unique(cats.begin(), cats.end()), cats.end());
    for (const std::string& c : cats) {
      const auto x = a.path.find(c), y = b.path.find(c);
      add("critical path", c, "ns", x == a.path.end() ? 0 : x->second, y == b.path.end() ? 0 : y->second, 0, c);
    }
  }
  for (size_t d = 0; d < std::max(a.dims.size(), b.dims.size()); ++d) {
    const ReportSummary::Dim* x = d < a.dims.size() ? &a.dims[d] : nullptr;
    const ReportSummary::Dim* y = d < b.dims.size() ? &b.dims[d] : nullptr;
    std::string block = x ? x->block : y->block;
    if (x && y && x->block != y->block) block += "/" + y->block;
    const std::string dim = "dim" + std::to_string(d) + " (" + block + ") ";
    auto get = [](const ReportSummary::Dim* v, double ReportSummary::Dim::*f) {
      return v ? std::optional<double>(v->*f) : std::nullopt;
    };
    add("network", dim + "bytes", "bytes", get(x, &ReportSummary::Dim::bytes), get(y, &ReportSummary::Dim::bytes));
    add("network", dim + "busy (ns)", "ns", get(x, &ReportSummary::Dim::busy), get(y, &ReportSummary::Dim::busy));
    add("network", dim + "utilisation", "fraction", get(x, &ReportSummary::Dim::utilisation),
        get(y, &ReportSummary::Dim::utilisation), 4);
    add("network", dim + "messages", "count", get(x, &ReportSummary::Dim::messages),
        get(y, &ReportSummary::Dim::messages));
  }
  add("counts", "messages", "count", a.messages, b.messages);
  add("counts", "collectives (all ranks)", "count", a.collectives, b.collectives);
  add("counts", "collective time (all ranks, ns)", "ns", a.collective_ns, b.collective_ns);
  add("counts", "memory accesses", "count", a.mem_accesses, b.mem_accesses);
  add("counts", "memory bytes", "bytes", a.mem_bytes, b.mem_bytes);
  add("counts", "memory queueing (ns)", "ns", a.mem_wait, b.mem_wait);
  return rows;
}

// The row whose category changed most: among the critical path's categories
// when both reports have one, else the slowest rank's five; -1 when none changed.
int LargestChange(const std::vector<Row>& rows, bool paths) {
  int best = -1;
  double best_abs = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.change.empty() || (r.section == "critical path") != paths || !r.a || !r.b) continue;
    const double d = std::fabs(*r.b - *r.a);
    if (d > best_abs) {
      best_abs = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string Fixed(double v, int decimals, bool sign = false) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), sign && v != 0 ? "%+.*f" : "%.*f", decimals, v == 0 ? 0.0 : v);
  return buf;
}

std::string Ratio(const Row& r) { return r.a && r.b && *r.a > 0 ? Fixed(*r.b / *r.a, 3) : "-"; }

// Signed simulated time for people: "+38.2 ms", "-1.5 us", "+700 ns".
std::string HumanNs(double ns) {
  const double m = std::fabs(ns);
  if (m < kNsPerUs) return Fixed(ns, 0, true) + " ns";
  if (m < kNsPerMs) return Fixed(NsToUs(ns), 1, true) + " us";
  if (m < kNsPerSecond) return Fixed(NsToMs(ns), 1, true) + " ms";
  return Fixed(NsToSeconds(ns), 2, true) + " s";
}

std::string ChangeText(const std::vector<Row>& rows, int at) {
  if (at < 0) return "largest change: none (the two runs agree on every category)";
  const Row& r = rows[at];
  std::string out = "largest change: " + r.change + " " + HumanNs(*r.b - *r.a);
  if (*r.a > 0) out += " (" + Fixed(100.0 * (*r.b - *r.a) / *r.a, 1, true) + "%)";
  return out;
}

std::string Side(const ReportSummary& s) {
  return s.file + " (backend " + s.backend + ", " + Fixed(s.npus, 0) + " NPUs, slowest rank " +
         Fixed(s.slowest_rank, 0) + (s.has_hash ? ", config " + s.hash : "") + ")";
}

std::string HashLine(const ReportSummary& a, const ReportSummary& b) {
  if (!a.has_hash || !b.has_hash) return "";
  return a.hash == b.hash ? "config: the same hash" : "config: the hashes differ";
}

std::string Text(const ReportSummary& a, const ReportSummary& b, const std::vector<Row>& rows, int largest) {
  std::string out = "a: " + Side(a) + "\nb: " + Side(b) + "\n";
  if (!HashLine(a, b).empty()) out += HashLine(a, b) + "\n";
  // Columns: the row's name (44 wide, longer names push the line), a, b, b-a (15), b/a (8).
  auto left = [](const std::string& x, size_t w) { return x.size() >= w ? x : x + std::string(w - x.size(), ' '); };
  auto right = [](const std::string& x, size_t w) { return x.size() >= w ? x : std::string(w - x.size(), ' ') + x; };
  out += "\n";
  out += left("", 44) + " " + right("a", 15) + " " + right("b", 15) + " " + right("b-a", 15) + " " + right("b/a", 8) +
         "\n";
  std::string section;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.section != section) {
      section = r.section;
      out += section + (section == "time" || section == "critical path" ? " (ns)" : "") + "\n";
    }
    out += left("  " + r.label, 44) + " " + right(r.a ? Fixed(*r.a, r.decimals) : "-", 15) + " " +
           right(r.b ? Fixed(*r.b, r.decimals) : "-", 15) + " " +
           right(r.a && r.b ? Fixed(*r.b - *r.a, r.decimals, true) : "-", 15) + " " + right(Ratio(r), 8) +
           (static_cast<int>(i) == largest ? "  <- largest change" : "") + "\n";
  }
  return out + "\n" + ChangeText(rows, largest) + "\n";
}

// An integral value as a JSON integer, anything else as a number.
nlohmann::ordered_json Number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}

std::string Json(const ReportSummary& a, const ReportSummary& b, const std::vector<Row>& rows, int largest) {
  nlohmann::ordered_json j;
  for (const auto* s : {&a, &b}) {
    auto& side = j[s == &a ? "a" : "b"] = {{"file", s->file},
                                           {"backend", s->backend},
                                           {"npus", Number(s->npus)},
                                           {"slowest_rank", Number(s->slowest_rank)}};
    if (s->has_hash) side["config_hash"] = s->hash;
  }
  if (a.has_hash && b.has_hash) j["config_hashes"] = a.hash == b.hash ? "equal" : "differ";
  auto& out = j["rows"] = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    nlohmann::ordered_json row = {{"section", r.section}, {"row", r.label}, {"unit", r.unit}};
    row["a"] = r.a ? Number(*r.a) : nullptr;
    row["b"] = r.b ? Number(*r.b) : nullptr;
    row["diff"] = r.a && r.b ? Number(*r.b - *r.a) : nullptr;
    row["ratio"] = r.a && r.b && *r.a > 0 ? nlohmann::ordered_json(*r.b / *r.a) : nullptr;
    out.push_back(row);
  }
  if (largest >= 0) {
    j["largest_change"] = {{"category", rows[largest].change},
                           {"section", rows[largest].section},
                           {"diff_ns", Number(*rows[largest].b - *rows[largest].a)},
                           {"text", ChangeText(rows, largest)}};
  } else {
    j["largest_change"] = nullptr;
  }
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string Csv(const std::vector<Row>& rows, int largest) {
  std::string out = "section,row,unit,a,b,diff,ratio,largest\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const int dec = r.decimals;
    out += CsvField(r.section) + "," + CsvField(r.label) + "," + r.unit + "," + (r.a ? Fixed(*r.a, dec) : "") + "," +
           (r.b ? Fixed(*r.b, dec) : "") + "," + (r.a && r.b ? Fixed(*r.b - *r.a, dec) : "") + "," +
           (Ratio(r) == "-" ? "" : Ratio(r)) + "," + (static_cast<int>(i) == largest ? "1" : "0") + "\n";
  }
  return out;
}

}  // namespace

Result<std::string> CompareReports(const CompareOptions& o) {
  if (o.format != "text" && o.format != "json" && o.format != "csv") {
    return Status::Invalid("--format = \"" + o.format + "\": valid: text, json, csv");
  }
  auto a = SummariseReport(o.a);
  if (!a.ok()) return a.status();
  auto b = SummariseReport(o.b);
  if (!b.ok()) return b.status();
  const std::vector<Row> rows = BuildRows(a.value(), b.value());
  const int largest = LargestChange(rows, a->has_path && b->has_path);
  if (o.format == "json") return Json(a.value(), b.value(), rows, largest);
  if (o.format == "csv") return Csv(rows, largest);
  return Text(a.value(), b.value(), rows, largest);
}

}  // namespace orrery
