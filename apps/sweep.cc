#include "apps/sweep.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "apps/sweep_filter.h"
#include "apps/sweep_metrics.h"
#include "apps/sweep_rows.h"
#include "core/parse.h"
#include "extern/astra_config.h"
#include "extern/json_util.h"
#include "network/notation.h"
#include "workload/gen/gen_source.h"
#include "workload/graph_source.h"
#include "workload/build.h"
#include "workload/fnv.h"
#include "workload/simulation.h"
#include "workload/spec.h"

namespace orrery::sweep {

namespace {

const char* const kDimFields[] = {"bandwidth_gbps", "latency_ns", "npus", "links_per_npu"};
const char* const kGenFlags[] = {"tp", "cp", "ep", "dp", "pp", "npus", "microbatches", "microbatch-size",
                                 "global-batch", "schedule", "recompute", "zero", "order", "bucket-mb",
                                 "hbm-gb", "place", "offload", "sp", "model"};
const char* const kRunFields[] = {"backend", "iterations", "symmetry"};

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

bool IsNumber(const std::string& s) {
  return ParseDouble(s, Where{"", 0, "x"}, DoubleRange{-1e300, 1e300, true}).ok();
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
    return SpecError(file, where, "unknown path '" + path + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                                      "; valid paths" + (near.empty() ? std::string(": ") + JoinStrings(valid, ", ")
                                                                      : " under '" + prefix + "': " + near));
  }
  const Where at{file, where.Mark().line + 1, path};
  if (path.rfind("network.dim", 0) == 0) {
    const std::string field = path.substr(path.rfind('.') + 1);
    if (field == "npus" || field == "links_per_npu") return ParseInt(v.text, at, 1, int64_t{1} << 26).status();
    return ParseDouble(v.text, at, DoubleRange{0, 1e12, true}).status();
  }
  if (path == "run.iterations") return ParseInt(v.text, at, 1, 1000000).status();
  if (path == "run.symmetry" && v.text != "auto" && v.text != "off") {
    return ValueError(at, v.text, "unknown symmetry mode", "auto, off");
  }
  static const std::set<std::string> kNumericGen = {"gen.tp", "gen.cp", "gen.ep", "gen.dp", "gen.pp", "gen.npus",
                                                    "gen.microbatches", "gen.microbatch-size", "gen.global-batch",
                                                    "gen.zero"};
  if (kNumericGen.count(path)) return ParseInt(v.text, at, 0, int64_t{1} << 30).status();
  if (path == "gen.sp" && v.text != "true" && v.text != "false") return ValueError(at, v.text, "not a boolean", "true, false");
  return Status::Ok();
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The base, read once: its inputs as a Spec (workload/spec.h) that every
// point copies and replaces fields of, and the system JSON document whose
// keys points replace.
struct Base {
  orrery::Spec spec;
  nlohmann::json system;
};

Result<Base> ReadBase(const Spec& spec, const Registries& registries) {
  Base b;
  RunConfig c;
  c.network_path = spec.network;
  c.system_path = spec.system;
  c.workload_prefix = spec.workload;
  c.comm_group_path = spec.comm_groups;
  c.memory_config_path = spec.memory;
  c.memory_path = spec.remote_memory;
  c.backend = spec.backend;
  c.iterations = spec.iterations;
  c.symmetry = spec.symmetry;
  auto inputs = ReadSpecInputs(c, registries);
  if (!inputs.ok()) return inputs.status();
  b.spec = std::move(inputs.value());
  auto sys = ReadJsonFile(spec.system);
  if (!sys.ok()) return sys.status();
  b.system = sys.value();
  // Completing the base once fills the Spec's caches (the traces' digest,
  // groups, custom algorithms) that points with as many NPUs reuse; a base
  // that does not complete leaves each point to say why.
  if (b.spec.source) {
    orrery::Spec warm = b.spec;
    if (CompleteSpec(&warm, registries).ok()) b.spec = std::move(warm);
  }
  return b;
}

// A point's generator command line: the base's flags with the point's replaced.
std::string GenerateLine(const std::string& base, const std::vector<Assignment>& point) {
  std::vector<std::string> args;
  std::istringstream in(base);
  for (std::string a; in >> a;) args.push_back(a);
  for (const Assignment& a : point) {
    if (a.path.rfind("gen.", 0) != 0) continue;
    const std::string flag = "--" + a.path.substr(4);
    args.erase(std::remove_if(args.begin(), args.end(),
                              [&](const std::string& x) { return x == flag || x.rfind(flag + "=", 0) == 0; }),
               args.end());
    if (a.path == "gen.sp") {
      if (a.value.text == "true") args.push_back(flag);
    } else {
      args.push_back(flag + "=" + a.value.text);
    }
  }
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

struct Prepared {
  orrery::Spec spec;
  std::string hash;
  std::string error;  // the point cannot run (a generator error): a row, not the end of the sweep
};

class Preparer {
 public:
  Preparer(const Spec& spec, const Base& base, const Registries& registries)
      : spec_(spec), base_(base), registries_(registries) {}

  // Spec-level errors (a network or system value the readers refuse) end
  // the sweep before anything runs; generator errors become the point's row.
  Result<Prepared> Prepare(uint64_t index, const std::vector<Assignment>& point) {
    Prepared p;
    p.spec = base_.spec;  // the point: the base with fields replaced
    orrery::Spec& c = p.spec;
    std::vector<Dim> dims = base_.spec.dims;
    nlohmann::json sys = base_.system;
    const std::string where = spec_.file + ": point " + std::to_string(index);
    for (const Assignment& a : point) {
      const std::string& path = a.path;
      if (path == "network.notation") {
        auto parsed = ParseTopologyNotation(a.value.text);
        if (!parsed.ok()) return parsed.status().Prefixed(where + ": network.notation: ");
        dims = parsed.value();
        c.files.network = a.value.text;
      } else if (path.rfind("network.dim", 0) == 0) {
        const size_t dot = path.find('.', 8);
        const int k = std::stoi(path.substr(11, dot - 11));
        if (k >= static_cast<int>(dims.size())) {
          return Status::Invalid(where + ": " + path + ": the network has " + std::to_string(dims.size()) +
                                 " dimension(s)");
        }
        const std::string field = path.substr(dot + 1);
        const double v = std::stod(a.value.text);
        if (field == "bandwidth_gbps") dims[k].bandwidth_gbps = v;
        if (field == "latency_ns") dims[k].latency_ns = v;
        if (field == "npus") dims[k].npus = static_cast<int>(v);
        if (field == "links_per_npu") dims[k].links_per_npu = static_cast<int>(v);
      } else if (path.rfind("system.", 0) == 0) {
        const std::string key = path.substr(7);
        if (key.size() > 15 && key.compare(key.size() - 15, 15, "-implementation") == 0) {
          sys[key] = nlohmann::json::array();
          for (size_t d = 0; d < dims.size(); ++d) sys[key].push_back(a.value.text);  // one per dimension
        } else if (!a.value.is_string && IsNumber(a.value.text)) {
          sys[key] = std::stod(a.value.text);
          if (a.value.text.find_first_of(".eE") == std::string::npos) sys[key] = std::stoll(a.value.text);
        } else {
          sys[key] = a.value.text;
        }
      } else if (path == "run.backend") {
        c.backend = a.value.text;
      } else if (path == "run.iterations") {
        c.iterations = std::stoi(a.value.text);
      } else if (path == "run.symmetry") {
        c.symmetry = a.value.text;
      }
    }
    for (const Dim& d : dims) {
      if (!(d.bandwidth_gbps >= 0.001)) {
        return Status::Invalid(where + ": a dimension's bandwidth_gbps = " + Num(d.bandwidth_gbps) +
                               "; allowed: >= 0.001");
      }
    }
    auto parsed = ParseAstraSystemJson(sys, spec_.system + " (" + where + ")");
    if (!parsed.ok()) return parsed.status();
    c.system = std::move(parsed.value());
    c.dims = std::move(dims);
    if (!spec_.generate.empty()) {
      const std::string generate = GenerateLine(spec_.generate, point);
      const std::string key = generate + "|" + c.files.network;
      auto it = generated_.find(key);
      if (it == generated_.end()) {
        auto source = gen::GeneratedSource(generate, c.files.network);
        it = generated_.emplace(key, source.ok() ? Entry{source.value(), ""} : Entry{nullptr, source.status().message()})
                 .first;
      }
      c.source = it->second.source;
      p.error = it->second.error;
    }
    // The rest of the point follows from its inputs (workload/spec.h); a
    // point that does not complete is a row with the reason.
    if (p.error.empty()) {
      if (Status st = CompleteSpec(&c, registries_); !st.ok()) p.error = st.message();
    }
    // The hash names the point's resolved inputs (SpecHash); a point that
    // could not be resolved is named by its assignments and the reason.
    if (p.error.empty()) {
      p.hash = SpecHash(c);
    } else {
      std::string text = "unresolved point\n" + p.error + "\n";
      for (const Assignment& a : point) text += a.path + "=" + a.value.text + "\n";
      p.hash = HexU64(Fnv1a(kFnvOffset, text));
    }
    return p;
  }

 private:
  struct Entry {
    std::shared_ptr<const GraphSource> source;
    std::string error;
  };
  const Spec& spec_;
  const Base& base_;
  const Registries& registries_;
  std::map<std::string, Entry> generated_;
};

// The base's values by path, for filters: the generate line's flags (and the
// generator's defaults of the parallelism flags it leaves out), the
// network's dimensions, the system JSON's scalar keys (a per-dimension list
// whose entries are equal counts as that value), the run settings.
std::map<std::string, Value> BaseValues(const Spec& spec, const std::vector<Dim>& dims) {
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
    // The generator's defaults for the flags the line leaves out (workload/gen/strategy.h).
    for (const char* flag : {"tp", "cp", "ep", "dp", "pp", "microbatches", "microbatch-size"}) {
      base.emplace(std::string("gen.") + flag, Value{"1", false});
    }
    base.emplace("gen.zero", Value{"0", false});
    base.emplace("gen.sp", Value{"false", false});
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    const std::string d = "network.dim" + std::to_string(k) + ".";
    base[d + "bandwidth_gbps"] = Value{Num(dims[k].bandwidth_gbps), false};
    base[d + "latency_ns"] = Value{Num(dims[k].latency_ns), false};
    base[d + "npus"] = Value{std::to_string(dims[k].npus), false};
    base[d + "links_per_npu"] = Value{std::to_string(dims[k].links_per_npu), false};
  }
  if (auto sys = ReadJsonFile(spec.system); sys.ok() && sys->is_object()) {
    for (auto it = sys->begin(); it != sys->end(); ++it) {
      nlohmann::json v = it.value();
      if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [&](const auto& x) { return x == v[0]; })) {
        v = v[0];
      }
      if (v.is_string()) base["system." + it.key()] = Value{v.get<std::string>(), true};
      if (v.is_number_integer()) base["system." + it.key()] = Value{std::to_string(v.get<int64_t>()), false};
      if (v.is_number_float()) base["system." + it.key()] = Value{Num(v.get<double>()), false};
      if (v.is_boolean()) base["system." + it.key()] = Value{v.get<bool>() ? "true" : "false", false};
    }
  }
  base["run.backend"] = Value{spec.backend, true};
  base["run.iterations"] = Value{std::to_string(spec.iterations), false};
  base["run.symmetry"] = Value{spec.symmetry, true};
  return base;
}

// Reads `filters:` and keeps the points they all hold for; every point keeps
// its index in the enumeration.
Result<Spec> ApplySpecFilters(const YAML::Node& node, const std::vector<Dim>& dims, Spec spec) {
  spec.enumerated = spec.points.size();
  spec.indices.resize(spec.points.size());
  for (uint64_t i = 0; i < spec.points.size(); ++i) spec.indices[i] = i;
  if (!node) return spec;
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
  auto kept = FilterPoints(path, filters, spec.points, BaseValues(spec, dims), ValidPaths(static_cast<int>(dims.size())));
  if (!kept.ok()) return kept.status();
  std::vector<std::vector<Assignment>> points;
  points.reserve(kept->size());
  for (uint64_t k : kept.value()) points.push_back(std::move(spec.points[k]));
  spec.points = std::move(points);
  spec.indices = kept.value();
  spec.filtered = spec.enumerated - spec.points.size();
  return spec;
}

}  // namespace

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

Result<Spec> ReadSpec(const std::string& path) {
  Spec spec;
  spec.file = path;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::Invalid(path + ": cannot read the sweep spec");
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) return Status::Invalid(path + ": expected a mapping with base, axes, zip or points");
  static const std::vector<std::string> kTop = {"base", "axes", "zip", "points", "filters"};
  static const std::vector<std::string> kBase = {"network", "system", "workload", "generate", "comm-groups", "memory",
                                                 "remote-memory", "backend", "iterations", "symmetry"};
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(kTop.begin(), kTop.end(), key) == kTop.end()) {
      return SpecError(path, kv.first, UnknownKeyMessage(key, kTop));
    }
  }
  const YAML::Node base = root["base"];
  if (!base || !base.IsMap()) return Status::Invalid(path + ": 'base' is required: the inputs every point starts from");
  for (const auto& kv : base) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(kBase.begin(), kBase.end(), key) == kBase.end()) {
      return SpecError(path, kv.first, "base: " + UnknownKeyMessage(key, kBase));
    }
    if (!kv.second.IsScalar()) return SpecError(path, kv.second, "base." + key + ": expected a single value");
    const std::string v = kv.second.Scalar();
    if (key == "network") spec.network = Resolve(path, v, true);
    if (key == "system") spec.system = Resolve(path, v);
    if (key == "workload") spec.workload = Resolve(path, v);
    if (key == "generate") spec.generate = v;
    if (key == "comm-groups") spec.comm_groups = Resolve(path, v);
    if (key == "memory") spec.memory = Resolve(path, v);
    if (key == "remote-memory") spec.remote_memory = Resolve(path, v);
    if (key == "backend") spec.backend = v;
    if (key == "symmetry") spec.symmetry = v;
    if (key == "iterations") {
      ORRERY_PARSE_OR_RETURN(spec.iterations, ParseInt(v, Where{path, kv.second.Mark().line + 1, "base.iterations"}, 1, 1000000));
    }
  }
  if (spec.network.empty() || spec.system.empty()) return Status::Invalid(path + ": base needs network and system");
  if (spec.workload.empty() == spec.generate.empty()) {
    return Status::Invalid(path + ": base needs exactly one of workload (a trace prefix) and generate (orrery gen's flags)");
  }
  auto dims = ReadNetworkDims(spec.network);
  if (!dims.ok()) return dims.status().Prefixed(path + ": base.network: ");
  const int ndims = static_cast<int>(dims->size());

  auto read_lists = [&](const char* section, std::vector<std::pair<std::string, std::vector<Value>>>* out) -> Status {
    const YAML::Node n = root[section];
    if (!n) return Status::Ok();
    if (!n.IsMap()) return SpecError(path, n, std::string(section) + ": expected a mapping of path: [values]");
    for (const auto& kv : n) {
      const std::string p = kv.first.as<std::string>();
      if (!kv.second.IsSequence() || kv.second.size() == 0) {
        return SpecError(path, kv.second, std::string(section) + "." + p + ": expected a non-empty list of values");
      }
      std::vector<Value> values;
      for (const auto& item : kv.second) {
        auto v = ScalarValue(path, item, p);
        if (!v.ok()) return v.status();
        ORRERY_RETURN_IF_ERROR(CheckAssignment(path, item, p, v.value(), ndims));
        values.push_back(v.value());
      }
      ORRERY_RETURN_IF_ERROR(CheckAssignment(path, kv.first, p, values[0], ndims));
      out->push_back({p, values});
    }
    return Status::Ok();
  };
  std::vector<std::pair<std::string, std::vector<Value>>> axes, zip;
  ORRERY_RETURN_IF_ERROR(read_lists("axes", &axes));
  ORRERY_RETURN_IF_ERROR(read_lists("zip", &zip));
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
  if (points) {
    if (!points.IsSequence()) return SpecError(path, points, "points: expected a list of {path: value} mappings");
    for (const auto& pt : points) {
      if (!pt.IsMap()) return SpecError(path, pt, "points: each point is a mapping of path: value");
      std::vector<Assignment> point;
      for (const auto& kv : pt) {
        const std::string p = kv.first.as<std::string>();
        auto v = ScalarValue(path, kv.second, p);
        if (!v.ok()) return v.status();
        ORRERY_RETURN_IF_ERROR(CheckAssignment(path, kv.second, p, v.value(), ndims));
        point.push_back({p, v.value()});
        if (std::find(spec.axis_paths.begin(), spec.axis_paths.end(), p) == spec.axis_paths.end()) {
          spec.axis_paths.push_back(p);
        }
      }
      spec.points.push_back(std::move(point));
    }
    return ApplySpecFilters(root["filters"], dims.value(), std::move(spec));
  }
  // Product of the axes (first slowest), the zipped lists one more axis.
  for (const auto& [p, v] : axes) spec.axis_paths.push_back(p);
  for (const auto& [p, v] : zip) spec.axis_paths.push_back(p);
  std::vector<size_t> sizes;
  for (const auto& [p, v] : axes) sizes.push_back(v.size());
  if (!zip.empty()) sizes.push_back(zip[0].second.size());
  uint64_t total = 1;
  for (size_t s : sizes) {
    total *= s;
    if (total > 10'000'000) return Status::Invalid(path + ": more than 10,000,000 points; split the sweep");
  }
  for (uint64_t i = 0; i < total; ++i) {
    std::vector<Assignment> point;
    uint64_t rest = i;
    std::vector<size_t> digit(sizes.size());
    for (size_t d = sizes.size(); d-- > 0;) {
      digit[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    for (size_t a = 0; a < axes.size(); ++a) point.push_back({axes[a].first, axes[a].second[digit[a]]});
    for (const auto& [p, v] : zip) point.push_back({p, v[digit.back()]});
    spec.points.push_back(std::move(point));
  }
  return ApplySpecFilters(root["filters"], dims.value(), std::move(spec));
}

struct Plan {
  const Spec* spec = nullptr;
  Options options;
  Base base;
  std::vector<size_t> mine;  // positions in spec->points, this shard's
  std::vector<Prepared> prepared;
  std::vector<std::shared_ptr<const GenFigures>> gen;  // per position in `mine` (null: not generated)
};

size_t PlanSize(const Plan& plan) { return plan.mine.size(); }

Result<std::shared_ptr<const Plan>> MakePlan(const Spec& spec, const Options& o) {
  auto plan = std::make_shared<Plan>();
  plan->spec = &spec;
  plan->options = o;
  const BackendRegistry backends = DefaultBackends();  // only for planning (no simulation runs here)
  const Registries registries{&backends, nullptr, nullptr};
  auto base = ReadBase(spec, registries);
  if (!base.ok()) return base.status();
  plan->base = std::move(base.value());
  // Every point of the shard is resolved before any runs: a bad value ends
  // the sweep here, with the point and path. Shards are taken over the points
  // the filters keep, so they stay balanced.
  Preparer prep(spec, plan->base, registries);
  std::map<std::string, std::shared_ptr<const GenFigures>> figures;
  for (size_t k = 0; k < spec.points.size(); ++k) {
    if (static_cast<int>(k % static_cast<size_t>(o.shard_count)) != o.shard_index) continue;
    auto p = prep.Prepare(spec.indices[k], spec.points[k]);
    if (!p.ok()) return p.status();
    if (o.critical_path) {
      p->spec.observe.critical_path = true;  // not in SpecHash (it observes), but it adds columns
      p->hash = HexU64(Fnv1a(std::stoull(p->hash, nullptr, 16), "critical-path"));
    }
    std::shared_ptr<const GenFigures> g;
    if (!spec.generate.empty() && p->error.empty()) {
      const std::string line = GenerateLine(spec.generate, spec.points[k]);
      auto it = figures.find(line);
      if (it == figures.end()) {
        auto f = GeneratedFigures(line, p->spec.system.peak_perf_tflops);
        it = figures.emplace(line, f.ok() ? std::make_shared<const GenFigures>(f.value()) : nullptr).first;
      }
      g = it->second;
    }
    plan->mine.push_back(k);
    plan->prepared.push_back(std::move(p.value()));
    plan->gen.push_back(std::move(g));
  }
  return std::shared_ptr<const Plan>(std::move(plan));
}

Row SimulatePoint(const Plan& plan, size_t k) {
  const Prepared& p = plan.prepared[k];
  Row row;
  row.index = plan.spec->indices[plan.mine[k]];
  row.point = plan.spec->points[plan.mine[k]];
  row.hash = p.hash;
  if (!p.error.empty()) {
    row.status = p.error;
    return row;
  }
  const BackendRegistry backends = DefaultBackends();  // each simulation its own: nothing shared
  auto report = RunSpec(p.spec, Registries{&backends, nullptr, nullptr});
  if (!report.ok()) {
    row.status = report.status().message();
    return row;
  }
  row.status = "ok";
  FillRow(report.value(), p.spec.iterations, plan.gen[k].get(), &row);
  return row;
}

namespace {

Status RunOnThreads(const Plan& plan, const std::vector<size_t>& todo, const std::function<void(Row)>& record) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t t; (t = next.fetch_add(1)) < todo.size();) record(SimulatePoint(plan, todo[t]));
  };
  std::vector<std::thread> pool;
  for (int j = 1; j < std::max(1, plan.options.jobs); ++j) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return Status::Ok();
}

}  // namespace

Result<Summary> RunSweep(const Spec& spec, const Options& o, std::string* dry_run_text, const Runner& runner) {
  Summary sum;
  sum.points = spec.points.size();
  auto made = MakePlan(spec, o);
  if (!made.ok()) return made.status();
  const Plan& plan = *made.value();
  const std::vector<Prepared>& prepared = plan.prepared;
  std::vector<uint64_t> mine;  // the shard's indices in the enumeration, ascending
  for (size_t k : plan.mine) mine.push_back(spec.indices[k]);
  sum.in_shard = mine.size();
  if (o.dry_run) {
    std::ostringstream t;
    t << spec.points.size() << " points";
    if (spec.filtered > 0) t << " (" << spec.filtered << " of " << spec.enumerated << " filtered out)";
    t << (o.shard_count > 1 ? ", " + std::to_string(mine.size()) + " in this shard" : "") << "\n";
    for (size_t k = 0; k < mine.size() && k < 10; ++k) {
      t << "  " << mine[k] << " [" << prepared[k].hash << "]";
      for (const Assignment& a : spec.points[plan.mine[k]]) t << " " << a.path << "=" << a.value.text;
      t << "\n";
    }
    *dry_run_text = t.str();
    return sum;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Status::Env(o.out_dir + ": cannot create the output folder: " + ec.message());
  const std::string stem = o.out_dir + "/sweep" +
                           (o.shard_count > 1 ? ".shard-" + std::to_string(o.shard_index + 1) + "-of-" +
                                                    std::to_string(o.shard_count)
                                              : std::string());
  sum.jsonl = stem + ".jsonl";
  sum.csv = stem + ".csv";
  auto existing = ReadRows(sum.jsonl);
  if (!existing.ok()) return existing.status();
  std::map<uint64_t, Row> done;
  for (Row& r : existing.value()) {
    // Kept only when the point is this shard's and its inputs are unchanged.
    const auto it = std::lower_bound(mine.begin(), mine.end(), r.index);
    if (it != mine.end() && *it == r.index && r.hash == prepared[it - mine.begin()].hash) done[r.index] = std::move(r);
  }
  std::vector<size_t> todo;
  for (size_t k = 0; k < mine.size(); ++k) {
    if (!done.count(mine[k])) todo.push_back(k);
  }
  sum.skipped = mine.size() - todo.size();
  // Rows of points already done stay; the file is rewritten with exactly them.
  {
    std::ofstream out(sum.jsonl, std::ios::binary | std::ios::trunc);
    for (const auto& [i, r] : done) out << RowJson(r) << "\n";
  }
  std::FILE* log = std::fopen(sum.jsonl.c_str(), "ab");
  if (!log) return Status::Env(sum.jsonl + ": cannot append");
  std::mutex mu;
  uint64_t finished = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  auto record = [&](Row row) {
    std::lock_guard<std::mutex> lock(mu);
    if (row.status != "ok") ++failed;
    std::fputs((RowJson(row) + "\n").c_str(), log);
    std::fflush(log);
    done[row.index] = std::move(row);
    const uint64_t n = ++finished;
    if (o.progress) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double rate = secs > 0 ? static_cast<double>(n) / secs : 0;
      std::fprintf(stderr, "\rsweep: %llu/%zu points, %.1f/s, ETA %.0f s, %llu failed   ",
                   static_cast<unsigned long long>(n), todo.size(), rate,
                   rate > 0 ? static_cast<double>(todo.size() - n) / rate : 0.0, static_cast<unsigned long long>(failed));
    }
  };
  const Status ran = runner ? runner(plan, todo, record) : RunOnThreads(plan, todo, record);
  std::fclose(log);
  if (o.progress && !todo.empty()) std::fputs("\n", stderr);
  if (!ran.ok()) return ran;
  sum.ran = finished;
  sum.failed = failed;
  std::vector<Row> rows;
  for (auto& [i, r] : done) rows.push_back(r);
  ORRERY_RETURN_IF_ERROR(WriteTables(spec.axis_paths, rows, sum.jsonl, sum.csv));
  return sum;
}

}  // namespace orrery::sweep
