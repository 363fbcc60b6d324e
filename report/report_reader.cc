// Reading a run report for `orrery report compare`: every field checked.
#include "report/compare.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <istream>
#include <map>
#include <optional>
#include <vector>

#include "extern/json_util.h"

namespace orrery {

namespace {

using nlohmann::json;

constexpr char kWhatIsAReport[] = "a report of 'orrery run --report-format=json'";

// Control characters (a hostile file's strings end up in the table) as '?'.
std::string Printable(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

// A value as a message shows it: `"abc" (a string)`, `-5 (a negative integer)`.
std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::string: {
      std::string s = Printable(v.get<std::string>());
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "\"" + s + "\" (a string)";
    }
    case json::value_t::number_unsigned: return v.dump() + " (an integer)";
    case json::value_t::number_integer:
      return v.dump() + (v.get<int64_t>() < 0 ? " (a negative integer)" : " (an integer)");
    case json::value_t::number_float: return v.dump() + " (a number)";
    case json::value_t::boolean: return v.dump() + " (a boolean)";
    case json::value_t::array: return "an array of " + std::to_string(v.size()) + " element(s)";
    case json::value_t::object: return "an object";
    default: return "null";
  }
}

// Reads the fields of one report; the first error is kept (and names the file).
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

  void Fail(const std::string& field, const json* got, const std::string& expected) {
    if (!status_.ok()) return;
    status_ = Status::Invalid(file_ + ": field \"" + field + "\" " + (got ? "is " + Describe(*got) : "is missing") +
                              "; expected " + expected +
                              (field.find_first_of(".[") == std::string::npos && !got
                                   ? std::string(" (is this ") + kWhatIsAReport + "?)"
                                   : ""));
  }
  // The member `key` of `obj` (whose own path is `at`), or null: missing (an
  // error unless optional) or not accepted by `accept`.
  const json* Member(const json& obj, const std::string& at, const std::string& key, bool (*accept)(const json&),
                     const std::string& expected, bool optional = false) {
    const std::string field = at.empty() ? key : at + "." + key;
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (!optional) Fail(field, nullptr, expected);
      return nullptr;
    }
    if (!accept(*it)) {
      Fail(field, &*it, expected);
      return nullptr;
    }
    return &*it;
  }
  double Uint(const json& obj, const std::string& at, const std::string& key, const std::string& what = "",
              bool optional = false) {
    const json* v = Member(
        obj, at, key, [](const json& j) { return j.is_number_unsigned(); },
        "a non-negative integer" + (what.empty() ? "" : " (" + what + ")"), optional);
    return v ? static_cast<double>(v->get<uint64_t>()) : 0;
  }
  double Number(const json& obj, const std::string& at, const std::string& key) {
    const json* v = Member(
        obj, at, key, [](const json& j) { return j.is_number() && j.get<double>() >= 0; }, "a non-negative number");
    return v ? v->get<double>() : 0;
  }
  std::string String(const json& obj, const std::string& at, const std::string& key) {
    const json* v = Member(
        obj, at, key, [](const json& j) { return j.is_string(); }, "a string");
    return v ? v->get<std::string>() : "";
  }
  const json* Array(const json& obj, const std::string& at, const std::string& key, const std::string& of,
                    bool optional = false) {
    return Member(
        obj, at, key, [](const json& j) { return j.is_array(); }, "an array of " + of, optional);
  }
  // An error found elsewhere (CollectiveFold), kept if it is the first.
  void Adopt(const Status& st) {
    if (status_.ok()) status_ = st;
  }
  const json* Object(const std::string& field, const json& v, const std::string& what) {
    if (v.is_object()) return &v;
    Fail(field, &v, what);
    return nullptr;
  }

 private:
  std::string file_;
  Status status_;
};

// The time split; peer_wait_ns (index 3) may be missing: reports made before
// that category existed read it as 0.
constexpr int kSplit = 5;
constexpr const char* kSplitKeys[kSplit] = {"compute_ns", "exposed_comm_ns", "mem_stall_ns", "peer_wait_ns", "idle_ns"};

// The entries of the top-level "collectives" array, checked and summed while
// the file is parsed and then dropped: a report that lists every rank's
// collectives (hundreds of MB before collective_totals) is never held whole.
class CollectiveFold {
 public:
  explicit CollectiveFold(const std::string& file) : file_(file) {}
  // nlohmann's parser callback: false drops the value just parsed.
  bool Event(int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (depth == 1 && event == E::key) key_ = parsed.get<std::string>();
    if (depth == 1 && event == E::array_start && key_ == "collectives") {
      *this = CollectiveFold(file_);  // a second "collectives" replaces the first, as in the tree
      in_array_ = true;
    } else if (depth == 1 && (event == E::array_end || event == E::object_end)) {
      in_array_ = false;
    }
    if (!in_array_ || depth != 2 || (event != E::object_end && event != E::array_end && event != E::value)) {
      return true;
    }
    Add(parsed);
    return false;
  }
  const Status& status() const { return status_; }
  double count() const { return count_; }
  double ns() const { return ns_; }

 private:
  void Add(const json& entry) {
    const size_t index = index_++;
    if (entry.is_object()) {  // the common case, without building a message
      const auto start = entry.find("start_ns"), end = entry.find("end_ns");
      if (start != entry.end() && end != entry.end() && start->is_number_unsigned() && end->is_number_unsigned() &&
          end->get<uint64_t>() >= start->get<uint64_t>()) {
        count_ += 1;
        ns_ += static_cast<double>(end->get<uint64_t>()) - static_cast<double>(start->get<uint64_t>());
        return;
      }
    }
    Reader rd(file_);
    const std::string at = "collectives[" + std::to_string(index) + "]";
    const json* c = rd.Object(at, entry, "an object with start_ns and end_ns");
    const double start = c ? rd.Uint(*c, at, "start_ns", "nanoseconds") : 0;
    const double end = c ? rd.Uint(*c, at, "end_ns", "nanoseconds") : 0;
    if (rd.ok() && end < start) {
      rd.Fail(at + ".end_ns", &c->at("end_ns"), "at least start_ns = " + c->at("start_ns").dump());
    }
    if (status_.ok()) status_ = rd.status();
    count_ += 1;
    ns_ += end - start;
  }
  std::string file_, key_;
  bool in_array_ = false;
  size_t index_ = 0;
  double count_ = 0, ns_ = 0;
  Status status_;
};

// The report parsed, its collectives folded into `fold`.
Result<json> Load(const std::string& path, CollectiveFold* fold) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return Status::Invalid(path + ": cannot read it (" + std::strerror(errno) + "); expected " + kWhatIsAReport);
  }
  if (S_ISDIR(st.st_mode)) return Status::Invalid(path + ": is a directory; expected " + std::string(kWhatIsAReport));
  // Parsed as it is read (the collectives are folded, not kept), at most kMaxReportFileBytes: an
  // endless input (/dev/zero, a pipe) is refused once that much is read.
  auto reader = BoundedFileReader::Open(path, kMaxReportFileBytes);
  if (!reader.ok()) return Status::Invalid(reader.status().message() + "; expected " + std::string(kWhatIsAReport));
  BoundedStreamBuf buf(&reader.value());
  std::istream in(&buf);
  try {
    json j = json::parse(in, [fold](int depth, json::parse_event_t event, json& parsed) {
      return fold->Event(depth, event, parsed);
    });
    if (!buf.status().ok()) return Status::Invalid(buf.status().message() + "; expected " + std::string(kWhatIsAReport));
    return j;
  } catch (const json::exception& e) {
    if (!buf.status().ok()) return Status::Invalid(buf.status().message() + "; expected " + std::string(kWhatIsAReport));
    std::string what = Printable(e.what());
    const size_t at = what.find("] ");
    if (at != std::string::npos) what = what.substr(at + 2);
    if (what.size() > 200) what = what.substr(0, 200) + "...";
    return Status::Invalid(path + ": not JSON: " + what + "; expected " + kWhatIsAReport);
  }
}

// A JSON object that is not a timeline; the report's fields are read after.
Status CheckTopLevel(const std::string& path, const json& j) {
  if (!j.is_object()) {
    return Status::Invalid(path + ": the top level is " + Describe(j) + "; expected a JSON object, " + kWhatIsAReport);
  }
  if (j.contains("traceEvents")) {
    return Status::Invalid(path + ": a trace-event timeline (it has \"traceEvents\"), not a run report; expected " +
                           kWhatIsAReport);
  }
  return Status::Ok();
}

// npu_count and one entry per rank: the slowest rank's split and the mean split.
void ReadNpus(Reader& rd, const json& j, ReportSummary& s) {
  s.npus = rd.Uint(j, "", "npu_count", "the number of NPUs");
  const json* npus = rd.Array(j, "", "npus", "per-rank objects");
  if (rd.ok() && s.npus < 1) rd.Fail("npu_count", &j.at("npu_count"), "at least 1");
  if (rd.ok() && static_cast<double>(npus->size()) != s.npus) {
    rd.Fail("npus", npus, "one entry per rank: npu_count = " + j.at("npu_count").dump());
  }
  for (size_t i = 0; rd.ok() && i < npus->size(); ++i) {
    const std::string at = "npus[" + std::to_string(i) + "]";
    const json* n = rd.Object(at, (*npus)[i], "an object with rank, finished_ns, compute_ns, ...");
    if (!n) return;
    const double rank = rd.Uint(*n, at, "rank");
    if (rd.ok() && rank >= s.npus) rd.Fail(at + ".rank", &n->at("rank"), "a rank below npu_count");
    const double finished = rd.Uint(*n, at, "finished_ns", "nanoseconds");
    double split[kSplit];
    for (int k = 0; k < kSplit; ++k) split[k] = rd.Uint(*n, at, kSplitKeys[k], "nanoseconds", k == 3);
    if (!rd.ok()) return;
    if (i == 0 || finished > s.finished || (finished == s.finished && rank < s.slowest_rank)) {
      s.finished = finished;
      s.slowest_rank = rank;
      std::copy(split, split + kSplit, s.slow);
    }
    for (int k = 0; k < kSplit; ++k) s.mean[k] += split[k] / s.npus;
  }
}

// The optional critical path's categories.
void ReadCriticalPath(Reader& rd, const json& j, ReportSummary& s) {
  const json* cp = rd.ok() ? rd.Member(
                                 j, "", "critical_path", [](const json& v) { return v.is_object(); },
                                 "an object (from orrery run --critical-path)", true)
                           : nullptr;
  if (!cp) return;
  s.has_path = true;
  const json* cats = rd.Array(*cp, "critical_path", "categories", "{category, ns} objects");
  for (size_t i = 0; rd.ok() && i < cats->size(); ++i) {
    const std::string at = "critical_path.categories[" + std::to_string(i) + "]";
    const json* c = rd.Object(at, (*cats)[i], "an object with category and ns");
    if (!c) return;
    const std::string name = rd.String(*c, at, "category");
    const double ns = rd.Uint(*c, at, "ns", "nanoseconds");
    if (rd.ok() && name.empty()) rd.Fail(at + ".category", &c->at("category"), "a non-empty category name");
    s.path[Printable(name)] += ns;
  }
}

void ReadDims(Reader& rd, const json& j, ReportSummary& s) {
  const json* dims = rd.ok() ? rd.Array(j, "", "dims", "per-dimension objects") : nullptr;
  for (size_t d = 0; rd.ok() && d < dims->size(); ++d) {
    const std::string at = "dims[" + std::to_string(d) + "]";
    const json* x = rd.Object(at, (*dims)[d], "an object with block, bytes, busy_ns, utilization, messages");
    if (!x) return;
    ReportSummary::Dim dim;
    dim.block = Printable(rd.String(*x, at, "block"));
    dim.bytes = rd.Uint(*x, at, "bytes");
    dim.busy = rd.Uint(*x, at, "busy_ns", "nanoseconds");
    dim.utilisation = rd.Number(*x, at, "utilization");
    dim.messages = rd.Uint(*x, at, "messages");
    s.dims.push_back(dim);
  }
}

// The collectives' count and time over every rank: a report's collective_totals;
// a report written before them lists every rank's collectives (or, a symmetric
// run, rank 0's, which are every rank's), and those are summed (`fold`, while parsing).
void ReadCollectives(Reader& rd, const json& j, const CollectiveFold& fold, ReportSummary& s) {
  if (rd.ok()) rd.Array(j, "", "collectives", "collective objects");
  const json* totals = rd.ok() ? rd.Member(
                                     j, "", "collective_totals", [](const json& v) { return v.is_object(); },
                                     "an object with count and duration_ns", true)
                               : nullptr;
  if (totals) {
    s.collectives = rd.Uint(*totals, "collective_totals", "count");
    s.collective_ns = rd.Uint(*totals, "collective_totals", "duration_ns", "nanoseconds");
  }
  rd.Adopt(fold.status());
  if (!rd.ok() || totals) return;
  s.collectives = fold.count();
  s.collective_ns = fold.ns();
  // Before collective_totals: a symmetric run listed the representative's collectives, which are
  // every rank's (a run by rank classes listed every rank's, with a note too).
  const auto symmetric = j.find("symmetric");
  if (j.contains("collectives_note") && symmetric != j.end() && *symmetric == true) {
    s.collectives *= s.npus;
    s.collective_ns *= s.npus;
  }
}

void ReadMemory(Reader& rd, const json& j, ReportSummary& s) {
  const json* mem = rd.ok() ? rd.Member(
                                  j, "", "memory", [](const json& v) { return v.is_object(); },
                                  "an object with accesses, bytes, wait_ns")
                            : nullptr;
  if (!mem) return;
  s.mem_accesses = rd.Uint(*mem, "memory", "accesses");
  s.mem_bytes = rd.Uint(*mem, "memory", "bytes");
  s.mem_wait = rd.Uint(*mem, "memory", "wait_ns", "nanoseconds");
}

// The optional config's hash.
void ReadConfigHash(Reader& rd, const json& j, ReportSummary& s) {
  const json* config = rd.ok() ? rd.Member(
                                     j, "", "config", [](const json& v) { return v.is_object(); },
                                     "an object (the effective configuration)", true)
                               : nullptr;
  if (!config) return;
  const json* hash = rd.Member(
      *config, "config", "hash", [](const json& v) { return v.is_string(); }, "a string", true);
  if (hash) {
    s.has_hash = true;
    s.hash = Printable(hash->get<std::string>());
  }
}

}  // namespace

Result<ReportSummary> SummariseReport(const std::string& path) {
  CollectiveFold fold(path);
  auto loaded = Load(path, &fold);
  if (!loaded.ok()) return loaded.status();
  const json& j = loaded.value();
  if (Status st = CheckTopLevel(path, j); !st.ok()) return st;
  Reader rd(path);
  ReportSummary s;
  s.file = path;
  s.backend = rd.String(j, "", "backend");
  ReadNpus(rd, j, s);
  ReadCriticalPath(rd, j, s);
  ReadDims(rd, j, s);
  if (rd.ok()) s.messages = rd.Uint(j, "", "messages");
  ReadCollectives(rd, j, fold, s);
  ReadMemory(rd, j, s);
  ReadConfigHash(rd, j, s);
  if (!rd.ok()) return rd.status();
  return s;
}

}  // namespace orrery
