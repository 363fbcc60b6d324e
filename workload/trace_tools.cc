#include "workload/trace_tools.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "core/output_file.h"
#include "core/parse.h"
#include "extern/et_io.h"
#include "workload/graph.h"
#include "workload/trace_groups.h"

namespace orrery {

namespace {

// The longest chain of dependencies (nodes in Kahn's order).
uint32_t DependencyDepth(const NpuGraph& g) {
  std::vector<uint32_t> depth(g.nodes.size(), 1), pending(g.nodes.size());
  std::vector<uint32_t> stack;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    pending[i] = g.nodes[i].num_deps;
    if (!pending[i]) stack.push_back(i);
  }
  uint32_t max_depth = 0;
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, depth[i]);
    for (uint32_t c = g.nodes[i].child_begin; c < g.nodes[i].child_end; ++c) {
      uint32_t k = g.children[c];
      depth[k] = std::max(depth[k], depth[i] + 1);
      if (--pending[k] == 0) stack.push_back(k);
    }
  }
  return max_depth;
}

// Replayed compute, GPU and CPU apart: node count and microseconds each.
std::string ComputeText(const NpuGraph& g) {
  uint64_t gpu_us = 0, cpu_us = 0, gpu = 0, cpu = 0, with_ops = 0;
  for (const WorkNode& n : g.nodes) {
    if (n.kind != NodeKind::kComp) continue;
    (n.is_cpu ? cpu_us : gpu_us) += n.duration_micros;
    ++(n.is_cpu ? cpu : gpu);
    with_ops += !n.is_cpu && n.has_num_ops;
  }
  return "compute (replay): " + std::to_string(gpu_us + cpu_us) + " us\n  GPU: " + std::to_string(gpu) + " node(s), " +
         std::to_string(gpu_us) + " us (" + std::to_string(with_ops) +
         " with num_ops, for the roofline)\n  CPU: " + std::to_string(cpu) + " node(s), " + std::to_string(cpu_us) +
         " us\n";
}

std::string GroupsText(const RawGroupTable& t) {
  std::string out = "process groups (" + t.origin + "):\n";
  for (const auto& [node, e] : t.entries) {
    std::vector<int> ranks(e.ranks.begin(), e.ranks.end());
    out += "  \"" + e.name + "\": " + (ranks.empty() ? std::string("every rank") : RankListText(ranks));
    if (e.group_size > 0) out += " (group_size " + std::to_string(e.group_size) + ")";
    out += "\n";
  }
  return out;
}

GraphLoadOptions LoadOptions(const TraceReadOptions& options) {
  GraphLoadOptions lo;
  lo.num_npus = 1 << 26;
  lo.num_dims = 64;
  lo.repair_ctrl_deps = options.repair_ctrl_deps;
  lo.replay_host_collectives = options.replay_host_collectives;
  return lo;
}

}  // namespace

Result<std::string> InspectTrace(const std::string& path, const TraceReadOptions& options) {
  GraphLoadOptions lo = LoadOptions(options);
  lo.ignore_groups = true;
  auto g = LoadNpuGraph(path, 0, lo);
  if (!g.ok()) return g.status();
  ORRERY_PARSE_OR_RETURN(const std::optional<RawGroupTable> groups, ReadRawGroupTable(path, 0));
  std::map<std::string, uint64_t> by_type;
  std::map<std::string, std::pair<uint64_t, uint64_t>> colls;
  for (const auto& n : g->nodes) {
    by_type[NodeTypeName(n.kind)]++;
    if (n.kind == NodeKind::kColl) {
      auto& c = colls[CollectiveName(n.collective)];
      c.first++;
      c.second += n.comm_size;
    }
  }
  std::ostringstream out;
  out << path << ": " << g->nodes.size() << " nodes, dependency depth " << DependencyDepth(g.value()) << "\n";
  out << "nodes by type:\n";
  for (const auto& [t, c] : by_type) out << "  " << t << ": " << c << "\n";
  out << ComputeText(g.value());
  if (!colls.empty()) {
    out << "collectives:\n";
    for (const auto& [t, c] : colls) out << "  " << t << ": " << c.first << " (" << c.second << " bytes)\n";
  }
  if (groups) out << GroupsText(*groups);
  return out.str();
}

namespace {

// The trace as JSON lines: its metadata, then one node per line, each line handed to `write`.
Status WriteJsonLines(EtReader* reader, const std::function<Status(const std::string&)>& write,
                      const std::string& et_path) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  std::string line;
  if (!google::protobuf::util::MessageToJsonString(reader->metadata(), &line, opts).ok()) {
    return Status::Env(et_path + ": cannot convert metadata to JSON");
  }
  ORRERY_RETURN_IF_ERROR(write(line + "\n"));
  ChakraProtoMsg::Node n;
  while (true) {
    auto more = reader->Next(&n);
    if (!more.ok()) return more.status();
    if (!more.value()) break;
    line.clear();
    if (!google::protobuf::util::MessageToJsonString(n, &line, opts).ok()) {
      return Status::Env(et_path + ": cannot convert node " + std::to_string(n.id()) + " to JSON");
    }
    ORRERY_RETURN_IF_ERROR(write(line + "\n"));
  }
  return Status::Ok();
}

// A node of `trace to-json` is a few hundred bytes; a longer line (an endless
// input without newlines, /dev/zero) is refused before it fills memory.
constexpr size_t kMaxJsonLineBytes = size_t{64} << 20;

// The next line of `in` (without its newline) into *line: true, false at the
// end, or an error past kMaxJsonLineBytes.
Result<bool> NextLine(std::istream& in, std::string* line, const std::string& path, int64_t lineno) {
  line->clear();
  std::streambuf* buf = in.rdbuf();
  for (int c; (c = buf->sbumpc()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (line->size() >= kMaxJsonLineBytes) {
      return Status::Invalid(path + ":" + std::to_string(lineno) + ": a line longer than " +
                             std::to_string(kMaxJsonLineBytes) +
                             " bytes (an endless input?); allowed: one JSON object per line, as 'orrery trace to-json' "
                             "writes");
    }
    line->push_back(static_cast<char>(c));
  }
  return !line->empty();
}

}  // namespace

// An empty json_path writes to standard output.
Status TraceToJson(const std::string& et_path, const std::string& json_path) {
  if (!json_path.empty()) ORRERY_RETURN_IF_ERROR(CheckOutputsAreNotInputs({{"--out", json_path}}, {{"FILE", et_path}}));
  EtReader reader;
  ORRERY_RETURN_IF_ERROR(reader.Open(et_path));
  if (json_path.empty()) {
    ORRERY_RETURN_IF_ERROR(WriteJsonLines(
        &reader,
        [](const std::string& line) {
          std::cout << line;
          return std::cout ? Status::Ok() : Status::Env("stdout: write failed");
        },
        et_path));
    std::cout.flush();
    if (!std::cout) return Status::Env("stdout: write failed");
    return Status::Ok();
  }
  ORRERY_PARSE_OR_RETURN(OutputFile out, OutputFile::Create(json_path, "--out"));
  ORRERY_RETURN_IF_ERROR(WriteJsonLines(&reader, [&out](const std::string& line) { return out.Write(line); }, et_path));
  return out.Commit();
}

Status TraceFromJson(const std::string& json_path, const std::string& et_path) {
  ORRERY_RETURN_IF_ERROR(CheckOutputsAreNotInputs({{"--out", et_path}}, {{"FILE", json_path}}));
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return Status::Invalid(json_path + ": cannot open file");
  std::string line;
  int64_t lineno = 0;
  EtWriter w;
  bool have_meta = false;
  while (true) {
    ORRERY_PARSE_OR_RETURN(const bool more, NextLine(in, &line, json_path, lineno + 1));
    if (!more) break;
    ++lineno;
    if (line.empty()) continue;
    if (!have_meta) {
      ChakraProtoMsg::GlobalMetadata md;
      auto st = google::protobuf::util::JsonStringToMessage(line, &md);
      if (!st.ok())
        return Status::Invalid(json_path + ":" + std::to_string(lineno) +
                               ": not a GlobalMetadata: " + std::string(st.message()));
      ORRERY_RETURN_IF_ERROR(w.Open(et_path, md));
      have_meta = true;
      continue;
    }
    ChakraProtoMsg::Node n;
    auto st = google::protobuf::util::JsonStringToMessage(line, &n);
    if (!st.ok())
      return Status::Invalid(json_path + ":" + std::to_string(lineno) + ": not a Node: " + std::string(st.message()));
    ORRERY_RETURN_IF_ERROR(w.Write(n));
  }
  if (!have_meta) return Status::Invalid(json_path + ": empty: expected a GlobalMetadata line first");
  return w.Close();
}

namespace {

// PREFIX as given, or the prefix of a rank file PREFIX.<r>.et given instead.
std::string PrefixOf(const std::string& given) {
  const size_t et = given.size() >= 3 ? given.size() - 3 : std::string::npos;
  if (et == std::string::npos || given.compare(et, 3, ".et") != 0) return given;
  const size_t dot = given.rfind('.', et - 1);
  if (dot == std::string::npos || dot + 1 == et) return given;
  const std::string digits = given.substr(dot + 1, et - dot - 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return given;
  return given.substr(0, dot);
}

std::string CheckSummary(const std::string& prefix, const TraceProblems& problems, size_t files, size_t bad_files,
                         uint64_t nodes, const std::string& groups) {
  if (problems.count == 0) {
    return prefix + ": " + std::to_string(files) + " rank file(s), " + std::to_string(nodes) + " node(s), " + groups +
           ": no problems found\n";
  }
  std::string out = prefix + ": " + std::to_string(problems.count) + " problem(s) in " + std::to_string(bad_files) +
                    " of " + std::to_string(files) + " rank file(s)";
  if (problems.messages.size() < problems.count) {
    out += "; the first " + std::to_string(problems.messages.size()) + " are listed (--limit=N lists more)";
  }
  return out + "\n";
}

}  // namespace

Result<TraceCheck> CheckTraces(const std::string& given, size_t limit, const TraceReadOptions& options) {
  const std::string prefix = PrefixOf(given);
  std::vector<std::string> paths;
  std::error_code ec;
  while (static_cast<int64_t>(paths.size()) < (int64_t{1} << 26)) {
    const std::string path = prefix + "." + std::to_string(paths.size()) + ".et";
    if (!std::filesystem::exists(path, ec)) break;
    paths.push_back(path);
  }
  if (paths.empty()) {
    return Status::Invalid(prefix +
                           ".0.et: trace file does not exist; trace check reads PREFIX.0.et, PREFIX.1.et, "
                           "... while they exist (give PREFIX)");
  }
  TraceProblems problems;
  problems.limit = limit;
  GraphLoadOptions lo = LoadOptions(options);
  lo.num_npus = static_cast<int>(paths.size());
  lo.problems = &problems;
  std::map<std::string, int> index;
  std::string groups = "no process groups";
  Result<TraceGroupTable> table = ReadTraceGroupTables(paths, {});
  if (!table.ok()) {
    problems.Add(table.status().message());
    lo.ignore_groups = true;  // a pg_name cannot be checked against a table that does not read
  } else {
    for (const auto& [name, ranks] : table->groups) index.emplace(name, static_cast<int>(index.size()));
    lo.groups = &index;
    if (!index.empty()) groups = std::to_string(index.size()) + " process group(s) (" + table->origin + ")";
  }
  uint64_t nodes = 0;
  size_t bad_files = 0;
  for (size_t r = 0; r < paths.size(); ++r) {
    const uint64_t before = problems.count;
    Result<NpuGraph> g = LoadNpuGraph(paths[r], static_cast<int>(r), lo);
    if (g.ok()) nodes += g->nodes.size();
    bad_files += problems.count != before;
  }
  if (!table.ok()) bad_files = std::max<size_t>(bad_files, 1);
  TraceCheck check;
  for (const std::string& m : problems.messages) check.text += m + "\n";
  check.text += CheckSummary(prefix, problems, paths.size(), bad_files, nodes, groups);
  check.problems = problems.count;
  return check;
}

Result<std::vector<std::string>> RemoveStaleRankTraces(const std::string& prefix, int npus) {
  namespace fs = std::filesystem;
  const fs::path p(prefix);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string base = p.filename().string() + ".";
  std::vector<std::pair<uint64_t, fs::path>> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= base.size() + 3 || name.compare(0, base.size(), base) != 0 ||
        name.compare(name.size() - 3, 3, ".et") != 0) {
      continue;
    }
    const std::string digits = name.substr(base.size(), name.size() - base.size() - 3);
    if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const uint64_t rank = ParseUint(digits, Where{name, 0, "rank"}, 0, UINT64_MAX).value();  // 18 digits at most
    if (rank >= static_cast<uint64_t>(npus) && std::to_string(rank) == digits) stale.emplace_back(rank, it->path());
  }
  if (ec) return Status::Env(dir.string() + ": cannot list the folder: " + ec.message());
  std::sort(stale.begin(), stale.end());
  std::vector<std::string> removed;
  for (const auto& [rank, path] : stale) {
    fs::remove(path, ec);
    if (ec) return Status::Env(path.string() + ": cannot remove a stale trace: " + ec.message());
    removed.push_back(path.string());
  }
  return removed;
}

}  // namespace orrery
