#include "workload/trace_tools.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/output_file.h"
#include "core/parse.h"
#include "extern/et_io.h"
#include "workload/graph.h"

namespace orrery {

Result<std::string> InspectTrace(const std::string& path) {
  GraphLoadOptions lo;
  lo.num_npus = 1 << 26;
  lo.num_dims = 64;
  auto g = LoadNpuGraph(path, 0, lo);
  if (!g.ok()) return g.status();
  std::map<std::string, uint64_t> by_type;
  std::map<std::string, std::pair<uint64_t, uint64_t>> colls;
  uint64_t compute_us = 0;
  for (const auto& n : g->nodes) {
    by_type[NodeTypeName(n.kind)]++;
    if (n.kind == NodeKind::kComp) compute_us += n.duration_micros;
    if (n.kind == NodeKind::kColl) {
      auto& c = colls[CollectiveName(n.collective)];
      c.first++;
      c.second += n.comm_size;
    }
  }
  // Dependency depth: longest chain (nodes are topologically ordered by Kahn below).
  std::vector<uint32_t> depth(g->nodes.size(), 1), pending(g->nodes.size());
  std::vector<uint32_t> stack;
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    pending[i] = g->nodes[i].num_deps;
    if (!pending[i]) stack.push_back(i);
  }
  uint32_t max_depth = 0;
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, depth[i]);
    for (uint32_t c = g->nodes[i].child_begin; c < g->nodes[i].child_end; ++c) {
      uint32_t k = g->children[c];
      depth[k] = std::max(depth[k], depth[i] + 1);
      if (--pending[k] == 0) stack.push_back(k);
    }
  }
  std::ostringstream out;
  out << path << ": " << g->nodes.size() << " nodes, dependency depth " << max_depth << "\n";
  out << "nodes by type:\n";
  for (const auto& [t, c] : by_type) out << "  " << t << ": " << c << "\n";
  out << "compute (replay): " << compute_us << " us\n";
  if (!colls.empty()) {
    out << "collectives:\n";
    for (const auto& [t, c] : colls) out << "  " << t << ": " << c.first << " (" << c.second << " bytes)\n";
  }
  return out.str();
}

Status TraceToJson(const std::string& et_path, const std::string& json_path) {
  ORRERY_RETURN_IF_ERROR(CheckOutputsAreNotInputs({{"--out", json_path}}, {{"FILE", et_path}}));
  EtReader reader;
  ORRERY_RETURN_IF_ERROR(reader.Open(et_path));
  ORRERY_PARSE_OR_RETURN(OutputFile out, OutputFile::Create(json_path, "--out"));
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  std::string line;
  if (!google::protobuf::util::MessageToJsonString(reader.metadata(), &line, opts).ok()) {
    return Status::Env(et_path + ": cannot convert metadata to JSON");
  }
  ORRERY_RETURN_IF_ERROR(out.Write(line + "\n"));
  ChakraProtoMsg::Node n;
  while (true) {
    auto more = reader.Next(&n);
    if (!more.ok()) return more.status();
    if (!more.value()) break;
    line.clear();
    if (!google::protobuf::util::MessageToJsonString(n, &line, opts).ok()) {
      return Status::Env(et_path + ": cannot convert node " + std::to_string(n.id()) + " to JSON");
    }
    ORRERY_RETURN_IF_ERROR(out.Write(line + "\n"));
  }
  return out.Commit();
}

namespace {

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
