// Sweep rows on disk: JSON Lines (the log a sweep appends to and resumes
// from) and CSV, both written in index order; merging shards.
#include "explore/sweep_rows.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "core/output_file.h"
#include "core/parse.h"
#include "core/units.h"

namespace orrery::sweep {

// A count in a row or a folder's identity, checked through core/parse.h: 1e300,
// -1 and 2.5 are refused (thrown to the reader's catch), never cast.
template <typename Json>
uint64_t JsonCountOrThrow(const Json& v, const std::string& key, uint64_t max) {
  const Where where{"", 0, key};
  Result<uint64_t> r{uint64_t{0}};
  if (v.is_number_unsigned()) {
    r = v.template get<uint64_t>() <= max ? Result<uint64_t>(v.template get<uint64_t>())
                                          : ValueError(where, v.dump(), "out of range", DescribeUintRange(0, max));
  } else if (v.is_number_integer()) {
    r = ValueError(where, v.dump(), "negative", DescribeUintRange(0, max));
  } else if (v.is_number_float()) {
    r = DoubleToUint(v.template get<double>(), where, 0, max);
  } else {
    r = ValueError(where, v.dump().substr(0, 40), "not a number", DescribeUintRange(0, max));
  }
  if (!r.ok()) throw std::invalid_argument(r.status().message());
  return r.value();
}
template uint64_t JsonCountOrThrow(const nlohmann::json&, const std::string&, uint64_t);
template uint64_t JsonCountOrThrow(const nlohmann::ordered_json&, const std::string&, uint64_t);

namespace {

uint64_t RowUint(const nlohmann::ordered_json& v, const std::string& key, uint64_t max = UINT64_MAX) {
  return JsonCountOrThrow(v, key, max);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

template <typename T>
nlohmann::ordered_json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}


template <typename T>
std::optional<T> Optional(const nlohmann::ordered_json& v, const char* key) {
  if (v.is_null()) return std::nullopt;
  if constexpr (std::is_same_v<T, uint64_t>) {
    return RowUint(v, key);
  } else {
    return v.get<T>();
  }
}

std::vector<uint64_t> RowUints(const nlohmann::ordered_json& v, const char* key) {
  std::vector<uint64_t> out;
  if (!v.is_array()) throw std::invalid_argument(std::string(key) + ": not a list");
  for (size_t i = 0; i < v.size(); ++i) out.push_back(RowUint(v[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

std::string OptText(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : ""; }

}  // namespace

Result<RowFile> ReadRows(const std::string& path) {
  RowFile file;
  std::vector<Row>& rows = file.rows;
  std::ifstream in(path, std::ios::binary);
  if (!in) return file;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  size_t pos = 0, good = 0;
  int line = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // partial last line
    ++line;
    auto row = ParseRowJson(text.substr(pos, nl - pos));
    if (!row.ok()) return row.status().Prefixed(path + ":" + std::to_string(line) + ": ");
    rows.push_back(std::move(row.value()));
    pos = good = nl + 1;
  }
  file.torn_bytes = text.size() - good;
  return file;
}

Status WriteTables(const std::vector<std::string>& axis_paths, std::vector<Row> rows, const std::string& jsonl,
                   const std::string& csv) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
  size_t dims = 0;
  for (const Row& r : rows) dims = std::max({dims, r.dim_busy_ns.size(), r.dim_exposed_comm_ns.size()});
  for (const auto& [path, text] : {std::make_pair(jsonl, true), std::make_pair(csv, false)}) {
    ORRERY_PARSE_OR_RETURN(OutputFile out, OutputFile::Create(path));
    if (!text) ORRERY_RETURN_IF_ERROR(out.Write(CsvHeader(axis_paths, dims)));
    for (const Row& r : rows) ORRERY_RETURN_IF_ERROR(out.Write(text ? RowJson(r) + "\n" : CsvRow(r, axis_paths, dims)));
    ORRERY_RETURN_IF_ERROR(out.Commit());
  }
  return Status::Ok();
}

std::string RowJson(const Row& r) {
  nlohmann::ordered_json j;
  j["index"] = r.index;
  nlohmann::ordered_json point = nlohmann::ordered_json::object();
  for (const Assignment& a : r.point) point[a.path] = a.value.text;
  j["point"] = point;
  j["hash"] = r.hash;
  j["status"] = r.status;
  j["finished_ns"] = r.finished_ns;
  j["compute_ns"] = r.compute_ns;
  j["exposed_comm_ns"] = r.exposed_comm_ns;
  j["mem_stall_ns"] = r.mem_stall_ns;
  j["peer_wait_ns"] = r.peer_wait_ns;
  j["idle_ns"] = r.idle_ns;
  j["peak_local_bytes"] = OrNull(r.peak_local_bytes);
  j["peak_remote_bytes"] = OrNull(r.peak_remote_bytes);
  j["gen_memory_bytes"] = OrNull(r.gen_memory_bytes);
  j["model_flops"] = r.model_flops.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.model_flops);
  j["mfu"] = OrNull(r.mfu);
  j["dim_busy_ns"] = r.dim_busy_ns;
  j["dim_exposed_comm_ns"] = r.dim_exposed_comm_ns;
  j["path_comm_other_ns"] = OrNull(r.path_comm_other_ns);
  return j.dump();
}

Result<Row> ParseRowJson(const std::string& line) {
  Row r;
  std::string field;  // the key being read: a wrong type names it
  try {
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    auto at = [&j, &field](const char* key) -> const nlohmann::ordered_json& {
      field.clear();  // a missing key is named by nlohmann's message
      const nlohmann::ordered_json& v = j.at(key);
      field = key;
      return v;
    };
    r.index = RowUint(at("index"), "index", kMaxSweepEnumerated - 1);
    for (auto it = at("point").begin(); it != j.at("point").end(); ++it) {
      field = "point";
      field += "." + it.key();
      r.point.push_back({it.key(), Value{it.value().get<std::string>(), false}});
    }
    r.hash = at("hash").get<std::string>();
    r.status = at("status").get<std::string>();
    r.finished_ns = RowUint(at("finished_ns"), "finished_ns");
    r.compute_ns = RowUint(at("compute_ns"), "compute_ns");
    r.exposed_comm_ns = RowUint(at("exposed_comm_ns"), "exposed_comm_ns");
    r.mem_stall_ns = RowUint(at("mem_stall_ns"), "mem_stall_ns");
    // Rows written before the column existed have no peer_wait_ns: 0.
    r.peer_wait_ns = j.contains("peer_wait_ns") ? RowUint(at("peer_wait_ns"), "peer_wait_ns") : 0;
    r.idle_ns = RowUint(at("idle_ns"), "idle_ns");
    r.peak_local_bytes = Optional<uint64_t>(at("peak_local_bytes"), "peak_local_bytes");
    r.peak_remote_bytes = Optional<uint64_t>(at("peak_remote_bytes"), "peak_remote_bytes");
    r.gen_memory_bytes = Optional<uint64_t>(at("gen_memory_bytes"), "gen_memory_bytes");
    r.model_flops = Optional<std::string>(at("model_flops"), "model_flops").value_or("");
    r.mfu = Optional<double>(at("mfu"), "mfu");
    r.dim_busy_ns = RowUints(at("dim_busy_ns"), "dim_busy_ns");
    r.dim_exposed_comm_ns = RowUints(at("dim_exposed_comm_ns"), "dim_exposed_comm_ns");
    r.path_comm_other_ns = Optional<uint64_t>(at("path_comm_other_ns"), "path_comm_other_ns");
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid("not a sweep row: " + (field.empty() ? std::string() : field + ": ") + e.what());
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("not a sweep row: ") + e.what());
  }
  return r;
}

std::string CsvHeader(const std::vector<std::string>& axis_paths, size_t dims) {
  std::string h = "index";
  for (const std::string& p : axis_paths) h += "," + CsvField(p);
  h += ",hash,status,finished_ns,iteration_s,compute_ns,exposed_comm_ns,mem_stall_ns,peer_wait_ns,idle_ns";
  h += ",peak_local_bytes,peak_remote_bytes,gen_memory_bytes,model_flops,mfu";
  for (size_t d = 0; d < dims; ++d) h += ",dim" + std::to_string(d) + "_busy_ns";
  for (size_t d = 0; d < dims; ++d) h += ",dim" + std::to_string(d) + "_exposed_comm_ns";
  h += ",path_comm_other_ns";
  return h + "\n";
}

std::string CsvRow(const Row& r, const std::vector<std::string>& axis_paths, size_t dims) {
  std::string s = std::to_string(r.index);
  for (const std::string& path : axis_paths) {  // the header's order; a path the point does not assign: empty
    const auto it = std::find_if(r.point.begin(), r.point.end(), [&](const Assignment& a) { return a.path == path; });
    s += "," + (it == r.point.end() ? std::string() : CsvField(it->value.text));
  }
  char secs[40];
  std::snprintf(secs, sizeof secs, "%.9f", NsToSeconds(static_cast<double>(r.finished_ns)));
  s += "," + r.hash + "," + CsvField(r.status) + "," + std::to_string(r.finished_ns) + "," + secs + "," +
       std::to_string(r.compute_ns) + "," + std::to_string(r.exposed_comm_ns) + "," + std::to_string(r.mem_stall_ns) +
       "," + std::to_string(r.peer_wait_ns) + "," + std::to_string(r.idle_ns);
  char mfu[40] = "";
  if (r.mfu) std::snprintf(mfu, sizeof mfu, "%.9g", *r.mfu);
  s += "," + OptText(r.peak_local_bytes) + "," + OptText(r.peak_remote_bytes) + "," + OptText(r.gen_memory_bytes) +
       "," + r.model_flops + "," + mfu;
  for (size_t d = 0; d < dims; ++d) s += "," + (d < r.dim_busy_ns.size() ? std::to_string(r.dim_busy_ns[d]) : "");
  for (size_t d = 0; d < dims; ++d) {
    s += "," + (d < r.dim_exposed_comm_ns.size() ? std::to_string(r.dim_exposed_comm_ns[d]) : "");
  }
  s += "," + OptText(r.path_comm_other_ns);
  return s + "\n";
}

}  // namespace orrery::sweep
