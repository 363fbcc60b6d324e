// Report formatting: text for people, JSON for machines, CSV for sweeps. The
// same inputs give byte-identical output (no wall-clock values in it).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iterator>
#include <map>
#include <utility>

#include "core/status.h"
#include "core/units.h"
#include "report/report.h"

namespace orrery {

namespace {

std::string Us(Tick ns) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f us", NsToUs(static_cast<double>(ns)));
  return buf;
}

// Where FormatReportJson's per-rank arrays go in the dumped text.
constexpr const char* kArrayMark = "\u0001";

// An array of flat records (numbers and strings) at the top level of the
// JSON report, written as nlohmann's dump(1) writes it (one space per level:
// entries at two, their fields at three) without building the tree: at 16,384
// ranks the collectives array alone has hundreds of thousands of entries.
class RecordArray {
 public:
  void Open() {
    text_ += records_++ == 0 ? "[\n  {" : "\n  },\n  {";
    first_field_ = true;
  }
  void Field(const char* key, uint64_t v) {
    Key(key);
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    text_.append(buf, res.ptr);
  }
  void Field(const char* key, int v) {
    Key(key);
    char buf[16];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    text_.append(buf, res.ptr);
  }
  void Field(const char* key, const std::string& v) {
    Key(key);
    text_ += nlohmann::ordered_json(v).dump();  // quoted and escaped as the tree would be
  }
  size_t size() const { return text_.size() + 8; }
  void AppendTo(std::string* out) const {
    if (records_ == 0) {
      *out += "[]";
      return;
    }
    *out += text_;
    *out += "\n  }\n ]";
  }

 private:
  void Key(const char* key) {
    text_ += first_field_ ? "\n   \"" : ",\n   \"";
    text_ += key;
    text_ += "\": ";
    first_field_ = false;
  }
  std::string text_;
  size_t records_ = 0;
  bool first_field_ = true;
};

std::string Pad(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

// Some rank ran CPU ops: the `cpu` share is shown (else every report stays as it was before it existed).
bool HasCpu(const RunReport& r) {
  return std::any_of(r.per_npu.begin(), r.per_npu.end(), [](const NpuReport& n) { return n.cpu_ns > 0; });
}

std::string Row(const NpuReport& n, bool cpu) {
  std::string out = Pad(std::to_string(n.rank), 6);
  for (Tick v : {n.finished_ns, n.compute_ns, n.comm_ns, n.exposed_comm_ns, n.mem_stall_ns, n.peer_wait_ns}) {
    out += Pad(std::to_string(v), 14);
  }
  if (cpu) out += Pad(std::to_string(n.cpu_ns), 14);
  return out + Pad(std::to_string(n.idle_ns), 14) + "\n";
}

double Percent(Tick part, Tick whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// "bottleneck: memory (compute 36.7%, exposed communication 10.0%, ...)": the
// largest of the five categories the slowest NPU's time splits into; waiting
// on peers is the pipeline bubble.
std::string BottleneckLine(const NpuReport& n) {
  const std::pair<const char*, Tick> parts[] = {{"compute", n.compute_ns},  {"communication", n.exposed_comm_ns},
                                                {"memory", n.mem_stall_ns}, {"pipeline bubble", n.peer_wait_ns},
                                                {"CPU ops", n.cpu_ns},      {"idle", n.idle_ns}};
  size_t top = 0;
  for (size_t i = 1; i < std::size(parts); ++i) {
    if (parts[i].second > parts[top].second) top = i;
  }
  char cpu[48] = "";
  if (n.cpu_ns > 0) std::snprintf(cpu, sizeof(cpu), "CPU ops %.1f%%, ", Percent(n.cpu_ns, n.finished_ns));
  char line[360];
  std::snprintf(line, sizeof(line),
                "bottleneck: %s (of the slowest NPU's time: compute %.1f%%, exposed communication %.1f%%, "
                "memory stall %.1f%%, waiting on peers %.1f%%, %sidle %.1f%%)\n",
                parts[top].first, Percent(n.compute_ns, n.finished_ns), Percent(n.exposed_comm_ns, n.finished_ns),
                Percent(n.mem_stall_ns, n.finished_ns), Percent(n.peer_wait_ns, n.finished_ns), cpu,
                Percent(n.idle_ns, n.finished_ns));
  return line;
}

std::string Share(Tick part, Tick whole) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", Percent(part, whole));
  return buf;
}

// "ALL_REDUCE 'layer23_ar' on rank 3" / "compute node 7 on rank 0".
std::string SegmentName(const PathSegment& s) {
  if (s.kind == "idle") return "idle on rank " + std::to_string(s.rank);
  return s.kind + (s.name.empty() ? " node " + std::to_string(s.node_id) : " '" + s.name + "'") + " on rank " +
         std::to_string(s.rank) + (s.iteration > 0 ? " (iteration " + std::to_string(s.iteration + 1) + ")" : "");
}

// The longest segment of a category (or, for another rank, of that rank).
const PathSegment* Longest(const CriticalPath& p, const std::string& category, int rank = -1) {
  const PathSegment* best = nullptr;
  for (const PathSegment& s : p.segments) {
    if (rank >= 0 ? s.rank != rank : s.category != category) continue;
    if (!best || s.end_ns - s.start_ns > best->end_ns - best->start_ns) best = &s;
  }
  return best;
}

// "bottleneck: communication dim1 (Switch): 72.0% of the critical path (longest: ALL_REDUCE 'ar' on rank 0, 33000 ns)".
// `per_npu`: the ranks' totals; the rank the path waited on most is a
// straggler only when it computed more than the rank the path ends on (in a
// balanced pipeline the path crosses ranks that did the same work).
std::string CriticalPathBottleneck(const CriticalPath& p, const std::vector<NpuReport>& per_npu) {
  if (p.categories.empty()) return "bottleneck: none (nothing ran)\n";
  const PathShare& top = p.categories.front();
  std::string what = top.category;
  const PathSegment* longest = Longest(p, top.category);
  if (top.category == "waiting on another rank" && !p.other_ranks.empty()) {
    // The straggler: the other rank with the most time on the path, and what it did most.
    const int straggler = p.other_ranks.front().first;
    std::map<std::string, Tick> activity;
    for (const PathSegment& s : p.segments) {
      if (s.rank == straggler) activity[s.activity] += s.end_ns - s.start_ns;
    }
    auto most = std::max_element(activity.begin(), activity.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    const auto compute = [&](int rank) {
      for (const NpuReport& n : per_npu) {
        if (n.rank == rank) return n.compute_ns;
      }
      return Tick{0};
    };
    const bool slower = compute(straggler) > compute(p.rank);
    what = std::string(slower ? "straggler rank " : "waiting on rank ") + std::to_string(straggler) + " (its " +
           most->first + ")";
    longest = Longest(p, "", straggler);
  }
  std::string line = "bottleneck: " + what + ": " + Share(top.ns, p.finished_ns) + " of the critical path";
  if (longest) {
    line += " (longest: " + SegmentName(*longest) + ", " + std::to_string(longest->end_ns - longest->start_ns) + " ns)";
  }
  return line + "\n";
}

std::string CriticalPathText(const CriticalPath& p) {
  std::string out = "\ncritical path: ";
  for (size_t i = 0; i < p.categories.size(); ++i) {
    out += (i ? ", " : "") + Share(p.categories[i].ns, p.finished_ns) + " " + p.categories[i].category;
  }
  out += "\n  ends on rank " + std::to_string(p.rank) + " at " + std::to_string(p.finished_ns) + " ns, " +
         std::to_string(p.segments.size()) + " segment(s)" +
         (p.representative ? "; symmetric run: the path of the representative rank, the same on every rank" : "") +
         "\n";
  for (const PathShare& c : p.categories) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "  %-40s %14llu ns %6s\n", c.category.c_str(),
                  static_cast<unsigned long long>(c.ns), Share(c.ns, p.finished_ns).c_str());
    out += buf;
  }
  for (size_t i = 0; i < p.other_ranks.size() && i < 4; ++i) {
    out += "    on rank " + std::to_string(p.other_ranks[i].first) + ": " + std::to_string(p.other_ranks[i].second) +
           " ns\n";
  }
  std::vector<const PathSegment*> top;
  for (const PathSegment& s : p.segments) top.push_back(&s);
  std::stable_sort(top.begin(), top.end(), [](const PathSegment* a, const PathSegment* b) {
    return a->end_ns - a->start_ns > b->end_ns - b->start_ns;
  });
  if (top.size() > 10) top.resize(10);
  out += "  longest segments\n";
  for (const PathSegment* s : top) {
    out += "    " + SegmentName(*s) + " " + std::to_string(s->start_ns) + " -> " + std::to_string(s->end_ns) + " ns (" +
           std::to_string(s->end_ns - s->start_ns) + " ns) " + s->category + "\n";
  }
  return out;
}

// The NPU that finished last (rank 0 when none ran), and when.
struct Slowest {
  Tick finished = 0;
  int rank = 0;
  NpuReport npu;
};

Slowest FindSlowest(const RunReport& r) {
  Slowest s;
  for (const auto& n : r.per_npu) {
    if (n.finished_ns > s.finished || (s.finished == 0 && n.rank == 0)) {
      s.finished = n.finished_ns;
      s.rank = n.rank;
      s.npu = n;
    }
  }
  return s;
}

// The run line, the network, the config hash and the symmetry note.
std::string HeaderText(const RunReport& r) {
  std::string out = "orrery run: " + std::to_string(r.npus) + " NPUs, backend " + r.backend + ", " +
                    std::to_string(r.iterations) + " iteration(s)\n";
  out += "network:";
  for (size_t d = 0; d < r.dims.size(); ++d) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s dim%zu %s(%d, %g GB/s, %g ns)", d ? "," : "", d, r.dims[d].block.c_str(),
                  r.dims[d].npus, r.dims[d].bandwidth_gbps, r.dims[d].latency_ns);
    out += buf;
  }
  out += "\n";
  if (!r.config_hash.empty()) out += "config hash: " + r.config_hash + "\n";
  if (r.rank_classes > 0) {
    out += "rank classes: " + r.symmetry_note + "\n";
  } else if (!r.symmetry_note.empty()) {
    out += "symmetric run: " + std::string(r.symmetric ? "" : "off \u2014 ") + r.symmetry_note + "\n";
  }
  if (!r.group_collectives.empty()) out += "group collectives: " + r.group_collectives + "\n";
  for (const std::string& note : r.notes) out += "note: " + note + "\n";
  return out;
}

// When the run finished, its bottleneck, and the critical path when there is one.
std::string FinishedText(const RunReport& r) {
  const Slowest slowest = FindSlowest(r);
  std::string out = "finished: " + std::to_string(slowest.finished) + " ns (" + Us(slowest.finished) + ") on rank " +
                    std::to_string(slowest.rank) + "\n";
  if (r.critical_path.rank >= 0) {
    // The critical path names the bottleneck; the slowest NPU's time split follows.
    out += CriticalPathBottleneck(r.critical_path, r.per_npu);
    std::string split = BottleneckLine(slowest.npu);
    out += "time of rank " + std::to_string(slowest.rank) + split.substr(split.find(" ("));
  } else {
    out += BottleneckLine(slowest.npu);
  }
  if (r.critical_path.rank >= 0) out += CriticalPathText(r.critical_path);
  return out;
}

std::string Fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// A generated run: model FLOPs utilisation and the rest (docs/report.md, "A generated run").
std::string GeneratedText(const RunReport& r) {
  const GeneratedReport& g = r.generated;
  if (!g.present) return "";
  std::string out = "\ngenerated workload, per iteration (" + Fixed("%.9g", g.iteration_s) + " s)\n";
  if (!g.model_flops.empty()) out += "  model FLOPs " + g.model_flops;
  out += (g.model_flops.empty() ? "  " : ", ") + std::string("hardware FLOPs ") + g.hardware_flops +
         " (recomputation included)\n";
  if (g.mfu) {
    out += "  MFU " + Fixed("%.1f%%", 100 * *g.mfu) + ", HFU " + Fixed("%.1f%%", 100 * *g.hfu) + " of " +
           std::to_string(r.npus) + " x " + g.device + " (" + Fixed("%g", g.peak_tflops) + " TFLOP/s peak, from the " +
           g.device_from + ")\n";
  } else {
    out += "  MFU, HFU: not reported: " + g.no_mfu + "\n";
  }
  if (g.tokens_per_s) {
    out += "  tokens/s " + Fixed("%.1f", *g.tokens_per_s) + " (" + std::to_string(g.tokens_per_iteration) +
           " tokens per iteration)\n";
  }
  if (g.memory_bytes) {
    out += "  memory per rank (generator's closed form): " + std::to_string(g.memory_bytes) + " bytes (" +
           Fixed("%.3g", static_cast<double>(g.memory_bytes) / 1e9) + " GB) at most, on stage " +
           std::to_string(g.memory_stage) + "\n";
  }
  return out;
}

// Every rank up to 64; beyond, the first and last four.
std::string PerNpuText(const RunReport& r) {
  const bool cpu = HasCpu(r);
  std::string out = "\nper NPU (ns)\n" + Pad("rank", 6);
  for (const char* h : {"finished", "compute", "comm", "exposed_comm", "mem_stall", "peer_wait"}) out += Pad(h, 14);
  out += (cpu ? Pad("cpu", 14) : "") + Pad("idle", 14) + "\n";
  if (r.per_npu.size() <= 64) {
    for (const auto& n : r.per_npu) out += Row(n, cpu);
  } else {
    for (size_t i = 0; i < 4; ++i) out += Row(r.per_npu[i], cpu);
    out += "   ... " + std::to_string(r.per_npu.size() - 8) + " more (use --report-format=json or csv for all)\n";
    for (size_t i = r.per_npu.size() - 4; i < r.per_npu.size(); ++i) out += Row(r.per_npu[i], cpu);
  }
  return out;
}

std::string CollectivesText(const RunReport& r) {
  if (r.collectives.empty()) return "";
  std::string out = "\ncollectives on rank 0\n";
  size_t shown = 0;
  for (const auto& c : r.collectives) {
    if (++shown > 32) {
      out += "  ... " + std::to_string(r.collectives.size() - 32) + " more\n";
      break;
    }
    out += "  node " + std::to_string(c.node_id) + " " + c.type + " " + std::to_string(c.bytes) + " B [" + c.algorithm +
           "] " + std::to_string(c.start_ns) + " -> " + std::to_string(c.end_ns) + " ns (" +
           std::to_string(c.end_ns - c.start_ns) + " ns)\n";
  }
  return out;
}

// The capacity peaks and warnings (when tracked) and the memory backend's traffic.
std::string MemoryText(const RunReport& r) {
  std::string out;
  if (r.capacity_tracked) {
    uint64_t peak = 0;
    int at = 0;
    for (const auto& n : r.per_npu) {
      if (n.peak_local_bytes > peak) {
        peak = n.peak_local_bytes;
        at = n.rank;
      }
    }
    out += "\nmemory capacity: peak local " + std::to_string(peak) + " bytes on rank " + std::to_string(at) +
           (r.local_capacity_bytes ? " of " + std::to_string(r.local_capacity_bytes) : std::string(" (unlimited)")) +
           "; peak remote " + std::to_string(r.peak_remote_bytes) + " bytes" +
           (r.remote_capacity_bytes ? " of " + std::to_string(r.remote_capacity_bytes) : std::string(" (unlimited)")) +
           "\n";
    for (const auto& w : r.warnings) out += "  warning: over capacity: " + w + "\n";
  }
  if (r.memory_accesses > 0) {
    out += "\nmemory (" + r.memory_backend + "): " + std::to_string(r.memory_accesses) + " accesses, " +
           std::to_string(r.memory_bytes) + " bytes, " + std::to_string(r.memory_wait_ns) + " ns waiting in queues\n";
  }
  return out;
}

std::string NetworkDimsText(const RunReport& r) {
  std::string out = "\nnetwork dimensions\n";
  int busiest = -1;
  for (size_t d = 0; d < r.dims.size(); ++d) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "  dim%zu %-15s %12llu messages %16llu bytes  link utilisation %5.1f%%\n", d,
                  r.dims[d].block.c_str(), static_cast<unsigned long long>(r.dims[d].messages),
                  static_cast<unsigned long long>(r.dims[d].bytes), 100 * r.dims[d].utilization);
    out += buf;
    if (busiest < 0 || r.dims[d].utilization > r.dims[busiest].utilization) busiest = static_cast<int>(d);
  }
  if (busiest >= 0 && r.dims.size() > 1) out += "  busiest dimension: dim" + std::to_string(busiest) + "\n";
  return out;
}

std::string LinksText(const RunReport& r) {
  if (!r.link_stats) return "";
  if (r.links.empty()) return "\nlink statistics: " + r.links_note + "\n";
  std::string out = "\nbusiest links (of " + std::to_string(r.links.size()) + " used)\n";
  for (size_t i = 0; i < r.links.size() && i < 10; ++i) {
    out += "  " + r.links[i].name + ": " + std::to_string(r.links[i].bytes) + " bytes, busy " +
           std::to_string(r.links[i].busy_ns) + " ns\n";
  }
  return out;
}

}  // namespace

std::string FormatReportText(const RunReport& r) {
  return HeaderText(r) + "\n" + FinishedText(r) + GeneratedText(r) + PerNpuText(r) + CollectivesText(r) +
         MemoryText(r) + NetworkDimsText(r) + LinksText(r);
}

namespace {

// The memory backend's traffic, and the capacities when they are tracked.
nlohmann::ordered_json MemoryJson(const RunReport& r) {
  nlohmann::ordered_json m = {{"backend", r.memory_backend},
                              {"accesses", r.memory_accesses},
                              {"bytes", r.memory_bytes},
                              {"wait_ns", r.memory_wait_ns}};
  if (r.capacity_tracked) {
    m["local_capacity_bytes"] = r.local_capacity_bytes;
    m["remote_capacity_bytes"] = r.remote_capacity_bytes;
    m["peak_remote_bytes"] = r.peak_remote_bytes;
    m["warnings"] = r.warnings;
  }
  return m;
}

nlohmann::ordered_json DimsJson(const RunReport& r) {
  auto dims = nlohmann::ordered_json::array();
  for (const auto& d : r.dims) {
    dims.push_back({{"block", d.block},
                    {"npus", d.npus},
                    {"bandwidth_gbps", d.bandwidth_gbps},
                    {"latency_ns", d.latency_ns},
                    {"messages", d.messages},
                    {"bytes", d.bytes},
                    {"busy_ns", d.busy_ns},
                    {"utilization", d.utilization}});
  }
  return dims;
}

nlohmann::ordered_json CriticalPathJson(const CriticalPath& p) {
  nlohmann::ordered_json cp = {{"rank", p.rank}, {"finished_ns", p.finished_ns}, {"representative", p.representative}};
  auto& cats = cp["categories"] = nlohmann::ordered_json::array();
  for (const PathShare& c : p.categories) cats.push_back({{"category", c.category}, {"ns", c.ns}});
  auto& others = cp["other_ranks"] = nlohmann::ordered_json::array();
  for (const auto& [rank, ns] : p.other_ranks) others.push_back({{"rank", rank}, {"ns", ns}});
  auto& segs = cp["segments"] = nlohmann::ordered_json::array();
  for (const PathSegment& s : p.segments) {
    segs.push_back({{"rank", s.rank},
                    {"iteration", s.iteration},
                    {"node_id", s.node_id},
                    {"name", s.name},
                    {"kind", s.kind},
                    {"start_ns", s.start_ns},
                    {"end_ns", s.end_ns},
                    {"category", s.category},
                    {"activity", s.activity}});
  }
  return cp;
}

nlohmann::ordered_json GeneratedJson(const GeneratedReport& g) {
  nlohmann::ordered_json j;
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(); };
  j["model_flops"] = g.model_flops.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(g.model_flops);
  j["hardware_flops"] = g.hardware_flops;
  j["iteration_s"] = g.iteration_s;
  j["device"] = g.device.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(g.device);
  j["peak_tflops"] = g.device.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(g.peak_tflops);
  j["mfu"] = opt(g.mfu);
  j["hfu"] = opt(g.hfu);
  if (!g.mfu) j["mfu_note"] = g.no_mfu;
  j["tokens_per_iteration"] = g.tokens_per_iteration ? nlohmann::ordered_json(g.tokens_per_iteration)
                                                     : nlohmann::ordered_json();
  j["tokens_per_s"] = opt(g.tokens_per_s);
  j["memory_bytes_per_rank"] = g.memory_bytes ? nlohmann::ordered_json(g.memory_bytes) : nlohmann::ordered_json();
  j["memory_stage"] = g.memory_bytes ? nlohmann::ordered_json(g.memory_stage) : nlohmann::ordered_json();
  return j;
}

// Per simulated rank: its collectives' count and summed duration.
class SimulatedSums {
 public:
  explicit SimulatedSums(const AllCollectives& all) {
    for (const CollectiveReport& c : all.simulated) {
      auto& [count, ns] = sums_[c.rank];
      count += 1;
      ns += c.end_ns - c.start_ns;
    }
  }
  std::pair<uint64_t, Tick> Of(int rank) const {
    auto it = sums_.find(rank);
    return it == sums_.end() ? std::pair<uint64_t, Tick>{0, 0} : it->second;
  }

 private:
  std::map<int, std::pair<uint64_t, Tick>> sums_;
};

// What the collectives array holds (rank 0's) and every rank's totals.
void AddCollectiveTotals(const RunReport& r, const SimulatedSums& sums, nlohmann::ordered_json& j) {
  j["collectives_note"] = r.symmetric ? "symmetric run: rank 0's collectives are every rank's"
                                      : "rank 0's collectives; every rank's: orrery run --collectives=FILE.csv";
  uint64_t count = 0;
  Tick ns = 0;
  for (int32_t from : r.all_collectives.source) {
    count += sums.Of(from).first;
    ns += sums.Of(from).second;
  }
  j["collective_totals"] = {{"count", count}, {"duration_ns", ns}};
}

// With rank classes: each class, and its representative's collectives when recorded.
void AddClasses(const RunReport& r, const SimulatedSums& sums, nlohmann::ordered_json& j) {
  auto& classes = j["classes"] = nlohmann::ordered_json::array();
  for (const RankClassReport& k : r.classes) {
    classes.push_back({{"class", k.id},
                       {"representative", k.representative},
                       {"members", k.members},
                       {"ranks", k.ranks},
                       {"finished_ns", k.finished_ns}});
    if (!r.all_collectives.recorded()) continue;
    classes.back()["collectives"] = sums.Of(k.representative).first;
    classes.back()["collective_ns"] = sums.Of(k.representative).second;
  }
}

// The report's tree, with a mark where the per-rank arrays go.
nlohmann::ordered_json ReportTree(const RunReport& r) {
  nlohmann::ordered_json j;
  // What produced the report: every input resolved, and its hash (run/spec.h).
  if (!r.config_json.empty()) j["config"] = nlohmann::ordered_json::parse(r.config_json);
  j["backend"] = r.backend;
  j["npu_count"] = r.npus;
  j["iterations"] = r.iterations;
  j["symmetric"] = r.symmetric;
  j["symmetry"] = r.symmetry_note;
  if (!r.notes.empty()) j["notes"] = r.notes;
  j["rank_classes"] = r.rank_classes;
  if (!r.group_collectives.empty()) j["group_collectives"] = r.group_collectives;
  Tick finished = 0;
  for (const auto& n : r.per_npu) finished = std::max(finished, n.finished_ns);
  j["finished_ns"] = finished;
  j["messages"] = r.messages;
  // The two arrays with an entry per rank (and per collective) are written
  // straight to text below, in dump(1)'s layout; here they hold a mark.
  j["npus"] = kArrayMark;
  j["collectives"] = kArrayMark;
  const SimulatedSums sums(r.all_collectives);
  if (r.all_collectives.recorded()) AddCollectiveTotals(r, sums, j);
  if (!r.classes.empty()) AddClasses(r, sums, j);
  j["memory"] = MemoryJson(r);
  j["dims"] = DimsJson(r);
  if (r.critical_path.rank >= 0) j["critical_path"] = CriticalPathJson(r.critical_path);
  if (r.generated.present) j["generated"] = GeneratedJson(r.generated);
  if (r.link_stats && r.links.empty()) j["links_note"] = r.links_note;
  if (r.link_stats && !r.links.empty()) {
    auto& links = j["links"] = nlohmann::ordered_json::array();
    for (const auto& l : r.links) {
      links.push_back({{"link", l.name}, {"dim", l.dim}, {"bytes", l.bytes}, {"busy_ns", l.busy_ns}});
    }
  }
  return j;
}

RecordArray NpuRecords(const RunReport& r) {
  const bool cpu = HasCpu(r);
  RecordArray npus;
  for (const auto& n : r.per_npu) {
    npus.Open();
    npus.Field("rank", n.rank);
    npus.Field("finished_ns", n.finished_ns);
    npus.Field("compute_ns", n.compute_ns);
    npus.Field("comm_ns", n.comm_ns);
    npus.Field("exposed_comm_ns", n.exposed_comm_ns);
    npus.Field("mem_stall_ns", n.mem_stall_ns);
    npus.Field("peer_wait_ns", n.peer_wait_ns);
    npus.Field("remote_mem_ns", n.remote_mem_ns);
    if (cpu) npus.Field("cpu_ns", n.cpu_ns);
    npus.Field("idle_ns", n.idle_ns);
    if (r.capacity_tracked) npus.Field("peak_local_bytes", n.peak_local_bytes);
  }
  return npus;
}

RecordArray CollectiveRecords(const RunReport& r) {
  RecordArray colls;
  for (const auto& c : r.collectives) {
    colls.Open();
    colls.Field("rank", c.rank);
    colls.Field("node_id", c.node_id);
    colls.Field("name", c.name);
    colls.Field("type", c.type);
    colls.Field("bytes", c.bytes);
    colls.Field("algorithm", c.algorithm);
    colls.Field("start_ns", c.start_ns);
    colls.Field("end_ns", c.end_ns);
  }
  return colls;
}

// The dumped tree with each array's text in place of its mark.
std::string SpliceArrays(const std::string& out, const RecordArray& npus, const RecordArray& colls) {
  // Top-level keys are the only ones one space deep (the config's are deeper).
  std::string result;
  result.reserve(out.size() + npus.size() + colls.size() + 1);
  size_t from = 0;
  for (auto [key, array] : {std::pair<const char*, const RecordArray*>{"npus", &npus}, {"collectives", &colls}}) {
    const std::string mark = std::string("\n \"") + key + "\": " + nlohmann::ordered_json(kArrayMark).dump();
    const size_t at = out.find(mark, from);
    ORRERY_CHECK(at != std::string::npos, "JSON report: the place of an array was lost");
    const size_t value = at + mark.size() - nlohmann::ordered_json(kArrayMark).dump().size();
    result.append(out, from, value - from);
    array->AppendTo(&result);
    from = at + mark.size();
  }
  result.append(out, from, std::string::npos);
  result += "\n";
  return result;
}

}  // namespace

std::string FormatReportJson(const RunReport& r) {
  return SpliceArrays(ReportTree(r).dump(1), NpuRecords(r), CollectiveRecords(r));
}

std::string FormatReportCsv(const RunReport& r) {
  // New columns go last, so a reader by position keeps working.
  const bool cpu = HasCpu(r);
  std::string out =
      "rank,finished_ns,compute_ns,comm_ns,exposed_comm_ns,idle_ns,remote_mem_ns,mem_stall_ns,peer_wait_ns" +
      std::string(cpu ? ",cpu_ns" : "") + "\n";
  for (const auto& n : r.per_npu) {
    out += std::to_string(n.rank) + "," + std::to_string(n.finished_ns) + "," + std::to_string(n.compute_ns) + "," +
           std::to_string(n.comm_ns) + "," + std::to_string(n.exposed_comm_ns) + "," + std::to_string(n.idle_ns) + "," +
           std::to_string(n.remote_mem_ns) + "," + std::to_string(n.mem_stall_ns) + "," +
           std::to_string(n.peer_wait_ns) + (cpu ? "," + std::to_string(n.cpu_ns) : "") + "\n";
  }
  return out;
}

namespace {

std::string CsvQuote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A collectives CSV row after its rank: ",node_id,name,...,duration_ns\n".
void AppendRowTail(const CollectiveReport& c, std::string* out) {
  *out += "," + std::to_string(c.node_id) + "," + CsvQuote(c.name) + "," + c.type + "," + std::to_string(c.bytes) +
          "," + CsvQuote(c.algorithm) + "," + std::to_string(c.start_ns) + "," + std::to_string(c.end_ns) + "," +
          std::to_string(c.end_ns - c.start_ns) + "\n";
}

// The simulated ranks' collectives: where each rank's begin in `simulated`.
std::map<int32_t, std::pair<size_t, size_t>> SimulatedRanges(const AllCollectives& all) {
  std::map<int32_t, std::pair<size_t, size_t>> at;
  for (size_t i = 0; i < all.simulated.size(); ++i) {
    auto [it, added] = at.try_emplace(all.simulated[i].rank, i, i);
    it->second.second = i + 1;
  }
  return at;
}

}  // namespace

void ForEachRankCollective(const RunReport& r, const std::function<void(int, const CollectiveReport&)>& each) {
  const auto at = SimulatedRanges(r.all_collectives);
  for (size_t rank = 0; rank < r.all_collectives.source.size(); ++rank) {
    auto it = at.find(r.all_collectives.source[rank]);
    if (it == at.end()) continue;
    for (size_t i = it->second.first; i < it->second.second; ++i) {
      each(static_cast<int>(rank), r.all_collectives.simulated[i]);
    }
  }
}

Status WriteCollectivesCsv(const RunReport& r, const std::function<Status(std::string_view)>& write) {
  constexpr size_t kBlock = 1 << 20;
  const AllCollectives& all = r.all_collectives;
  const auto at = SimulatedRanges(all);
  std::map<int32_t, int> copies;  // per simulated rank: the ranks that have its collectives
  for (int32_t from : all.source) ++copies[from];
  // The rows after the rank column of a simulated rank that several ranks copy
  // (a class's representative), formatted once: O(the simulated ranks' collectives).
  std::map<int32_t, std::vector<std::string>> shared;
  std::string block = "rank,node_id,name,type,bytes,algorithm,start_ns,end_ns,duration_ns\n";
  for (size_t rank = 0; rank < all.source.size(); ++rank) {
    const auto it = at.find(all.source[rank]);
    if (it == at.end()) continue;
    const auto [begin, end] = it->second;
    std::vector<std::string>* tails = nullptr;
    if (copies[it->first] > 1) {
      auto [s, added] = shared.try_emplace(it->first);
      tails = &s->second;
      for (size_t i = begin; added && i < end; ++i) AppendRowTail(all.simulated[i], &tails->emplace_back());
    }
    const std::string prefix = std::to_string(rank);
    for (size_t i = begin; i < end; ++i) {
      block += prefix;
      if (tails) {
        block += (*tails)[i - begin];
      } else {
        AppendRowTail(all.simulated[i], &block);
      }
      if (block.size() < kBlock) continue;
      ORRERY_RETURN_IF_ERROR(write(block));
      block.clear();
    }
  }
  return write(block);
}

std::string FormatLinksCsv(const RunReport& r) {
  std::string out = "link,dim,bytes,busy_ns\n";
  for (const LinkStat& l : r.links) {
    out += "\"" + l.name + "\"," + std::to_string(l.dim) + "," + std::to_string(l.bytes) + "," +
           std::to_string(l.busy_ns) + "\n";
  }
  return out;
}

}  // namespace orrery
