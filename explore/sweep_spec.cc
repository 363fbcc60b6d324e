#include "explore/sweep.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "core/fnv.h"
#include "core/limits.h"
#include "core/parse.h"
#include "explore/sweep_filter.h"
#include "explore/sweep_point.h"
#include "extern/json_util.h"
#include "extern/yaml_map.h"
#include "network/notation.h"

namespace orrery::sweep {

namespace {

const char* const kDimFields[] = {"bandwidth_gbps", "latency_ns", "npus", "links_per_npu"};
const char* const kGenFlags[] = {"tp",           "cp",        "ep",           "dp",
                                 "pp",           "npus",      "microbatches", "microbatch-size",
                                 "global-batch", "schedule",  "recompute",    "zero",
                                 "order",        "bucket-mb", "hbm-gb",       "place",
                                 "offload",      "sp",        "model"};
const char* const kRunFields[] = {"backend", "iterations", "symmetry", "heterogeneity"};

std::string Dir(const std::string& file) {
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

// A path in the spec, relative to the spec's folder; a notation stays as is.
std::string Resolve(const std::string& spec_file, const std::string& path, bool may_be_notation = false) {
  if (path.empty() || path[0] == '/') return path;
  if (may_be_notation && path.find('(') != std::string::npos) return path;
  return Dir(spec_file) + "/" + path;
}

Status SpecError(const std::string& file, const YAML::Node& n, const std::string& what) {
  return Status::Invalid(file + ":" + std::to_string(n.Mark().line + 1) + ": " + what);
}

Result<Value> ScalarValue(const std::string& file, const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) return SpecError(file, n, path + ": expected a single value (a number or a string)");
  Value v;
  v.text = n.Scalar();
  v.is_string = n.Tag() == "!";  // quoted in the YAML
  return v;
}

// Checks a path and the type of its value at spec time.
Status CheckAssignment(const std::string& file, const YAML::Node& where, const std::string& path, const Value& v,
                       int dims) {
  const std::vector<std::string> valid = ValidPaths(dims);
  if (std::find(valid.begin(), valid.end(), path) == valid.end()) {
    const std::string close = ClosestMatch(path, valid);
    std::string near;
    const std::string prefix = path.substr(0, path.find('.') + 1);
    for (const std::string& p : valid) {
      if (p.rfind(prefix, 0) == 0 && near.size() < 400) near += (near.empty() ? "" : ", ") + p;
    }
    return SpecError(file, where,
                     "unknown path '" + path + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                         "; valid paths" +
                         (near.empty() ? std::string(": ") + JoinStrings(valid, ", ")
                                       : " under '" + prefix + "': " + near));
  }
  const Where at{file, where.Mark().line + 1, path};
  if (path.rfind("network.dim", 0) == 0) {  // the ranges of a network file (core/limits.h)
    const std::string field = path.substr(path.rfind('.') + 1);
    if (field == "npus") return ParseInt(v.text, at, 1, kMaxNpus).status();
    if (field == "links_per_npu") return ParseInt(v.text, at, 1, kMaxLinksPerNpu).status();
    return ParseDouble(v.text, at, field == "latency_ns" ? kLatencyNs : kBandwidthGBps).status();
  }
  if (path == "run.iterations") return ParseInt(v.text, at, 1, 1000000).status();
  if (path == "run.symmetry" && v.text != "auto" && v.text != "off") {
    return ValueError(at, v.text, "unknown symmetry mode", "auto, off");
  }
  static const std::set<std::string> kNumericGen = {"gen.tp",           "gen.cp",
                                                    "gen.ep",           "gen.dp",
                                                    "gen.pp",           "gen.npus",
                                                    "gen.microbatches", "gen.microbatch-size",
                                                    "gen.global-batch", "gen.zero"};
  if (kNumericGen.count(path)) return ParseInt(v.text, at, 0, int64_t{1} << 30).status();
  if (path == "gen.sp" && v.text != "true" && v.text != "false")
    return ValueError(at, v.text, "not a boolean", "true, false");
  return Status::Ok();
}

// The base's values by path, for filters: the generate line's flags (and the
// generator's defaults of the parallelism flags it leaves out), the
// network's dimensions, the system JSON's scalar keys (a per-dimension list
// whose entries are equal counts as that value), the run settings.
std::map<std::string, Value> BaseValues(const SweepSpec& spec, const std::vector<Dim>& dims) {
  std::map<std::string, Value> base;
  std::istringstream in(spec.generate);
  for (std::string a; in >> a;) {
    if (a.rfind("--", 0) != 0) continue;
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      base["gen." + a.substr(2)] = Value{"true", false};
    } else {
      base["gen." + a.substr(2, eq - 2)] = Value{a.substr(eq + 1), false};
    }
  }
  if (!spec.generate.empty()) {
    // The generator's defaults for the flags the line leaves out (gen/strategy.h).
    for (const char* flag : {"tp", "cp", "ep", "dp", "pp", "microbatches", "microbatch-size"}) {
      base.emplace(std::string("gen.") + flag, Value{"1", false});
    }
    base.emplace("gen.zero", Value{"0", false});
    base.emplace("gen.sp", Value{"false", false});
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    const std::string d = "network.dim" + std::to_string(k) + ".";
    base[d + "bandwidth_gbps"] = Value{ExactNumber(dims[k].bandwidth_gbps), false};
    base[d + "latency_ns"] = Value{ExactNumber(dims[k].latency_ns), false};
    base[d + "npus"] = Value{std::to_string(dims[k].npus), false};
    base[d + "links_per_npu"] = Value{std::to_string(dims[k].links_per_npu), false};
  }
  if (auto sys = ReadJsonFile(spec.base.files.system); sys.ok() && sys->is_object()) {
    for (auto it = sys->begin(); it != sys->end(); ++it) {
      nlohmann::json v = it.value();
      if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [&](const auto& x) { return x == v[0]; })) {
        v = v[0];
      }
      if (v.is_string()) base["system." + it.key()] = Value{v.get<std::string>(), true};
      if (v.is_number_integer()) base["system." + it.key()] = Value{std::to_string(v.get<int64_t>()), false};
      if (v.is_number_float()) base["system." + it.key()] = Value{ExactNumber(v.get<double>()), false};
      if (v.is_boolean()) base["system." + it.key()] = Value{v.get<bool>() ? "true" : "false", false};
    }
  }
  base["run.backend"] = Value{spec.base.run.backend, true};
  base["run.iterations"] = Value{std::to_string(spec.base.run.iterations), false};
  base["run.symmetry"] = Value{SymmetryName(spec.base.run.symmetry), true};
  return base;
}

// Reads and compiles `filters:` (null when there are none); the points
// enumerated run through them one by one.
Result<std::unique_ptr<PointFilters>> CompileSpecFilters(const YAML::Node& node, const std::vector<Dim>& dims,
                                                         const SweepSpec& spec) {
  if (!node) return std::unique_ptr<PointFilters>();
  const std::string& path = spec.file;
  if (!node.IsSequence()) {
    return SpecError(path, node, "filters: expected a list of conditions, e.g. [\"gen.tp * gen.pp <= 16\"]");
  }
  std::vector<FilterText> filters;
  for (const auto& f : node) {
    if (!f.IsScalar() || f.Scalar().empty()) {
      return SpecError(path, f, "filters: each filter is one condition in a string, e.g. \"tp * pp <= 16\"");
    }
    filters.push_back({f.Scalar(), f.Mark().line + 1});
  }
  return PointFilters::Compile(path, filters, spec.axis_paths, BaseValues(spec, dims),
                               ValidPaths(static_cast<int>(dims.size())));
}

// The points a spec may keep: limits.points, fewer when each assigns many paths.
uint64_t MostKept(const SweepSpec& spec, const SweepLimits& limits) {
  return std::min(limits.points, limits.values / std::max<uint64_t>(1, spec.axis_paths.size()));
}

Status TooManyKept(const SweepSpec& spec, const SweepLimits& limits, const std::string& when) {
  return Status::Invalid(spec.file + ": more than " + std::to_string(MostKept(spec, limits)) + " points kept (" + when +
                         "); allowed: at most " + std::to_string(limits.points) + " points in one spec and " +
                         std::to_string(limits.values) + " values (" +
                         std::to_string(std::max<size_t>(1, spec.axis_paths.size())) +
                         " per point here): split the sweep into several specs, or filter more");
}

// Keeps point `index` of the enumeration when the filters hold for it; at
// most limits.points points, and limits.values values over all of them.
Status Keep(std::vector<Assignment> point, uint64_t index, PointFilters* filters, const SweepLimits& limits,
            SweepSpec* spec) {
  if (filters) {
    bool keep = true;
    ORRERY_PARSE_OR_RETURN(keep, filters->Holds(point, index));
    if (!keep) return Status::Ok();
  }
  if (spec->points.size() >= MostKept(*spec, limits)) {
    return TooManyKept(*spec, limits, "reached at point " + std::to_string(index) + " of the enumeration");
  }
  spec->points.push_back(std::move(point));
  spec->indices.push_back(index);
  return Status::Ok();
}

}  // namespace

std::string ResolveSpecPath(const std::string& spec_file, const std::string& path) {
  return Resolve(spec_file, path);
}

std::vector<std::string> ValidPaths(int network_dims) {
  std::vector<std::string> out = {"network.notation"};
  for (int k = 0; k < network_dims; ++k) {
    for (const char* f : kDimFields) out.push_back("network.dim" + std::to_string(k) + "." + f);
  }
  for (const std::string& key : AstraSystemKeys()) out.push_back("system." + key);
  for (const char* f : kGenFlags) out.push_back(std::string("gen.") + f);
  for (const char* f : kRunFields) out.push_back(std::string("run.") + f);
  return out;
}

namespace {

using Lists = std::vector<std::pair<std::string, std::vector<Value>>>;

Result<YAML::Node> LoadSpecYaml(const std::string& path) {
  ORRERY_PARSE_OR_RETURN(const YAML::Node root,
                         LoadYamlMapping(path, {"cannot read the sweep spec", "not valid YAML",
                                                "expected a mapping with base, axes, zip or points"}));
  static const std::vector<std::string> kTop = {"base", "axes", "zip", "points", "filters"};
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> top, MappingEntries(root, path, ""));
  for (const YamlEntry& kv : top) {
    const std::string& key = kv.key;
    if (std::find(kTop.begin(), kTop.end(), key) == kTop.end()) {
      return SpecError(path, kv.key_node, UnknownKeyMessage(key, kTop));
    }
  }
  return root;
}

// One key of `base`: a file (resolved against the spec's folder), the
// generator line, or a run setting.
Status ReadBaseKey(const std::string& path, const std::string& key, const YAML::Node& value, SweepSpec* spec) {
  const std::string v = value.Scalar();
  SpecFiles& files = spec->base.files;
  if (key == "network") files.network = Resolve(path, v, true);
  if (key == "system") files.system = Resolve(path, v);
  if (key == "workload") files.workload_prefix = Resolve(path, v);
  if (key == "generate") spec->generate = v;
  if (key == "comm-groups") files.comm_groups = Resolve(path, v);
  if (key == "memory") files.memory_config = Resolve(path, v);
  if (key == "remote-memory") files.remote_memory = Resolve(path, v);
  if (key == "heterogeneity") files.heterogeneity = Resolve(path, v);
  if (key == "backend") spec->base.run.backend = v;
  if (key == "symmetry" && !ParseSymmetry(v, &spec->base.run.symmetry)) {
    return ValueError(Where{path, value.Mark().line + 1, "base.symmetry"}, v, "unknown symmetry mode", "auto, off");
  }
  if (key == "iterations") {
    ORRERY_PARSE_OR_RETURN(spec->base.run.iterations,
                           ParseInt(v, Where{path, value.Mark().line + 1, "base.iterations"}, 1, 1000000));
  }
  return Status::Ok();
}

Status ReadBaseSection(const std::string& path, const YAML::Node& root, SweepSpec* spec) {
  static const std::vector<std::string> kBase = {"network",       "system",  "workload",   "generate",
                                                 "comm-groups",   "memory",  "remote-memory", "heterogeneity",
                                                 "backend",       "iterations", "symmetry"};
  const YAML::Node base = root["base"];
  if (!base || !base.IsMap()) return Status::Invalid(path + ": 'base' is required: the inputs every point starts from");
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(base, path, "base"));
  for (const YamlEntry& kv : entries) {
    const std::string& key = kv.key;
    if (std::find(kBase.begin(), kBase.end(), key) == kBase.end()) {
      return SpecError(path, kv.key_node, "base: " + UnknownKeyMessage(key, kBase));
    }
    if (!kv.value.IsScalar()) return SpecError(path, kv.value, "base." + key + ": expected a single value");
    ORRERY_RETURN_IF_ERROR(ReadBaseKey(path, key, kv.value, spec));
  }
  const SpecFiles& files = spec->base.files;
  if (files.network.empty() || files.system.empty()) return Status::Invalid(path + ": base needs network and system");
  if (files.workload_prefix.empty() == spec->generate.empty()) {
    return Status::Invalid(path +
                           ": base needs exactly one of workload (a trace prefix) and generate (orrery gen's flags)");
  }
  return Status::Ok();
}

// `axes` or `zip`: path -> its values, each checked.
Status ReadLists(const std::string& path, const YAML::Node& root, const char* section, int ndims, Lists* out) {
  const YAML::Node n = root[section];
  if (!n) return Status::Ok();
  if (!n.IsMap()) return SpecError(path, n, std::string(section) + ": expected a mapping of path: [values]");
  ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(n, path, section));
  for (const YamlEntry& kv : entries) {
    const std::string& p = kv.key;
    if (!kv.value.IsSequence() || kv.value.size() == 0) {
      return SpecError(path, kv.value, std::string(section) + "." + p + ": expected a non-empty list of values");
    }
    std::vector<Value> values;
    for (const auto& item : kv.value) {
      auto v = ScalarValue(path, item, p);
      if (!v.ok()) return v.status();
      ORRERY_RETURN_IF_ERROR(CheckAssignment(path, item, p, v.value(), ndims));
      values.push_back(v.value());
    }
    ORRERY_RETURN_IF_ERROR(CheckAssignment(path, kv.key_node, p, values[0], ndims));
    out->push_back({p, values});
  }
  return Status::Ok();
}

// `points`: the explicit list, each point a mapping of path: value (counted before any is read).
Status ReadExplicitPoints(const std::string& path, const YAML::Node& points, int ndims, uint64_t most, SweepSpec* spec,
                          std::vector<std::vector<Assignment>>* out) {
  if (!points.IsSequence()) return SpecError(path, points, "points: expected a list of {path: value} mappings");
  if (points.size() > most) {
    return SpecError(path, points,
                     "points: " + std::to_string(points.size()) + " points; allowed: at most " + std::to_string(most) +
                         " points in one spec: split the sweep into several specs");
  }
  for (const auto& pt : points) {
    if (!pt.IsMap()) return SpecError(path, pt, "points: each point is a mapping of path: value");
    std::vector<Assignment> point;
    ORRERY_PARSE_OR_RETURN(const std::vector<YamlEntry> entries, MappingEntries(pt, path, "points"));
    for (const YamlEntry& kv : entries) {
      const std::string& p = kv.key;
      auto v = ScalarValue(path, kv.value, p);
      if (!v.ok()) return v.status();
      ORRERY_RETURN_IF_ERROR(CheckAssignment(path, kv.value, p, v.value(), ndims));
      point.push_back({p, v.value()});
      if (std::find(spec->axis_paths.begin(), spec->axis_paths.end(), p) == spec->axis_paths.end()) {
        spec->axis_paths.push_back(p);
      }
    }
    out->push_back(std::move(point));
  }
  return Status::Ok();
}

// The number of points the axes (and the zipped lists, one more axis) give,
// counted with checked products before any is made.
Result<uint64_t> CountProduct(const std::string& path, const Lists& axes, const Lists& zip, uint64_t most) {
  std::vector<Factor> sizes;
  for (const auto& [p, v] : axes) sizes.push_back({p, static_cast<int64_t>(v.size())});
  if (!zip.empty()) sizes.push_back({"zip", static_cast<int64_t>(zip[0].second.size())});
  ORRERY_PARSE_OR_RETURN(
      const int64_t total,
      CheckedProduct(sizes, static_cast<int64_t>(most), Where{path, 0, "points"},
                     "at most " + std::to_string(most) +
                         " points enumerated by one spec: split the sweep into several specs, or shorten an axis"));
  return static_cast<uint64_t>(total);
}

// The product of the axes (first slowest), the zipped lists one more axis,
// each point through the filters as it is made.
Status ProductPoints(const std::string& path, const Lists& axes, const Lists& zip, PointFilters* filters,
                     const SweepLimits& limits, SweepSpec* spec) {
  ORRERY_PARSE_OR_RETURN(const uint64_t total, CountProduct(path, axes, zip, limits.enumerated));
  if (!filters && total > MostKept(*spec, limits)) {  // every point would be kept: refused before any is made
    return TooManyKept(*spec, limits, std::to_string(total) + " enumerated, no filters");
  }
  std::vector<size_t> sizes;
  for (const auto& [p, v] : axes) sizes.push_back(v.size());
  if (!zip.empty()) sizes.push_back(zip[0].second.size());
  std::vector<size_t> digit(sizes.size());
  for (uint64_t i = 0; i < total; ++i) {
    std::vector<Assignment> point;
    uint64_t rest = i;
    for (size_t d = sizes.size(); d-- > 0;) {
      digit[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    for (size_t a = 0; a < axes.size(); ++a) point.push_back({axes[a].first, axes[a].second[digit[a]]});
    for (const auto& [p, v] : zip) point.push_back({p, v[digit.back()]});
    ORRERY_RETURN_IF_ERROR(Keep(std::move(point), i, filters, limits, spec));
  }
  spec->enumerated = total;
  return Status::Ok();
}

// The points before filters, hashed (SweepSpec::enumeration): the axes and
// zip lists, or the explicit points, each value with its type.
std::string EnumerationHash(const Lists& axes, const Lists& zip, const std::vector<std::vector<Assignment>>& points) {
  uint64_t h = kFnvOffset;
  auto add = [&h](const std::string& path, const Value& v) {
    h = Fnv1a(h, path + (v.is_string ? "=s:" : "=n:") + v.text + "\n");
  };
  for (const auto& [section, lists] : {std::make_pair("axes", &axes), std::make_pair("zip", &zip)}) {
    h = Fnv1a(h, std::string(section) + "\n");
    for (const auto& [p, values] : *lists) {
      for (const Value& v : values) add(p, v);
      h = Fnv1a(h, "|\n");
    }
  }
  h = Fnv1a(h, "points\n");
  for (const std::vector<Assignment>& point : points) {
    for (const Assignment& a : point) add(a.path, a.value);
    h = Fnv1a(h, "|\n");
  }
  return HexU64(h);
}

// The line of the spec that assigns `p` first (0: none found).
int LineOf(const YAML::Node& root, const std::string& p) {
  for (const char* section : {"axes", "zip"}) {
    const YAML::Node lists = root[section];
    if (lists && lists.IsMap() && lists[p]) return lists[p].Mark().line + 1;
  }
  const YAML::Node points = root["points"];
  if (!points || !points.IsSequence()) return 0;
  for (const auto& point : points) {
    if (point.IsMap() && point[p]) return point[p].Mark().line + 1;
  }
  return 0;
}

// gen.* paths replace the generator's flags: a base that reads traces has none,
// and rows labelled with values that changed nothing would pass for results.
Status CheckGenPathsHaveAGenerator(const std::string& path, const YAML::Node& root, const SweepSpec& spec) {
  if (!spec.generate.empty()) return Status::Ok();
  for (const std::string& p : spec.axis_paths) {
    if (p.rfind("gen.", 0) != 0) continue;
    const int line = LineOf(root, p);
    return Status::Invalid(path + (line > 0 ? ":" + std::to_string(line) : "") + ": " + p +
                           ": the base reads traces (base.workload = \"" + spec.base.files.workload_prefix +
                           "\"), which no gen.* value changes; allowed: network.*, system.* and run.* paths, or a "
                           "base with generate: (orrery gen's flags) instead of workload:");
  }
  return Status::Ok();
}

}  // namespace

Result<SweepSpec> ReadSweepSpec(const std::string& path, const SweepLimits& limits) {
  SweepSpec spec;
  spec.file = path;
  ORRERY_PARSE_OR_RETURN(const YAML::Node root, LoadSpecYaml(path));
  ORRERY_RETURN_IF_ERROR(ReadBaseSection(path, root, &spec));
  auto dims = ReadNetworkDims(spec.base.files.network);
  if (!dims.ok()) return dims.status().Prefixed(path + ": base.network: ");
  const int ndims = static_cast<int>(dims->size());
  Lists axes, zip;
  ORRERY_RETURN_IF_ERROR(ReadLists(path, root, "axes", ndims, &axes));
  ORRERY_RETURN_IF_ERROR(ReadLists(path, root, "zip", ndims, &zip));
  for (const auto& [p, values] : zip) {
    if (values.size() != zip[0].second.size()) {
      return Status::Invalid(path + ": zip lists must have equal lengths: " + zip[0].first + " has " +
                             std::to_string(zip[0].second.size()) + ", " + p + " has " + std::to_string(values.size()));
    }
  }
  const YAML::Node points = root["points"];
  if (points && (!axes.empty() || !zip.empty())) {
    return SpecError(path, points, "points: give either an explicit list of points or axes/zip, not both");
  }
  std::vector<std::vector<Assignment>> listed;
  if (points) {
    ORRERY_RETURN_IF_ERROR(ReadExplicitPoints(path, points, ndims, limits.points, &spec, &listed));
  } else {
    for (const auto& [p, v] : axes) spec.axis_paths.push_back(p);
    for (const auto& [p, v] : zip) spec.axis_paths.push_back(p);
  }
  ORRERY_RETURN_IF_ERROR(CheckGenPathsHaveAGenerator(path, root, spec));
  spec.enumeration = EnumerationHash(axes, zip, listed);
  ORRERY_PARSE_OR_RETURN(std::unique_ptr<PointFilters> filters,
                         CompileSpecFilters(root["filters"], dims.value(), spec));
  if (points) {
    for (uint64_t i = 0; i < listed.size(); ++i) {
      ORRERY_RETURN_IF_ERROR(Keep(std::move(listed[i]), i, filters.get(), limits, &spec));
    }
    spec.enumerated = listed.size();
  } else {
    ORRERY_RETURN_IF_ERROR(ProductPoints(path, axes, zip, filters.get(), limits, &spec));
  }
  spec.filtered = spec.enumerated - spec.points.size();
  return spec;
}

}  // namespace orrery::sweep
