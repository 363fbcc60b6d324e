#include "extern/astra_config.h"

#include <algorithm>
#include <set>

#include "core/limits.h"
#include "extern/config_values.h"
#include "extern/json_util.h"

namespace orrery {

namespace {

const std::vector<std::string>& SystemKeys() {
  static const std::vector<std::string> keys = {"scheduling-policy",
                                                "endpoint-delay",
                                                "active-chunks-per-dimension",
                                                "preferred-dataset-splits",
                                                "all-reduce-implementation",
                                                "all-gather-implementation",
                                                "reduce-scatter-implementation",
                                                "all-to-all-implementation",
                                                "all-reduce-implementation-custom",
                                                "all-gather-implementation-custom",
                                                "reduce-scatter-implementation-custom",
                                                "all-to-all-implementation-custom",
                                                "collective-optimization",
                                                "local-mem-bw",
                                                "boost-mode",
                                                "roofline-enabled",
                                                "peak-perf",
                                                "track-local-mem",
                                                "local-mem-trace-filename",
                                                "local-reduction-delay",
                                                "model-shared-bus",
                                                "intra-dimension-scheduling",
                                                "inter-dimension-scheduling",
                                                "trace-enabled",
                                                "replay-only",
                                                "L",
                                                "o",
                                                "g",
                                                "G",
                                                "in-switch-reduction-bw",
                                                "device",
                                                "group-collective-model",
                                                "collective-sm-fraction"};
  return keys;
}

Status ImplList(const std::string& path, const nlohmann::json& j, const std::string& key, bool custom,
                std::vector<CollectiveImplSpec>* out, const std::vector<std::string>& plugin_algorithms) {
  const auto& v = j.at(key);
  if (!v.is_array()) {
    return ValueError(Where{path, 0, key}, v.dump(), "expected a list", "a list with one entry per dimension");
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    ORRERY_PARSE_OR_RETURN(const std::string s,
                           JsonString(path, v[i], at, custom ? "a trace prefix" : "an algorithm name"));
    CollectiveImplSpec spec;
    spec.name = s;
    const BuiltinAlgorithm* builtin = FindBuiltinAlgorithm(s);
    if (custom) {
      spec.kind = AlgoKind::kCustom;
      spec.custom_prefix = s;
    } else if (std::find(plugin_algorithms.begin(), plugin_algorithms.end(), s) != plugin_algorithms.end()) {
      spec.kind = AlgoKind::kPlugin;
    } else if (builtin) {
      spec.kind = builtin->kind;
      spec.one = builtin->one;
    } else if (s.rfind("oneDirect", 0) == 0 || s.rfind("direct", 0) == 0) {  // direct<N>, oneDirect<N>
      const bool one = s.rfind("oneDirect", 0) == 0;
      spec.kind = AlgoKind::kDirect;
      spec.one = one;
      const std::string rest = s.substr(one ? 9 : 6);
      const Where where{path, 0, at + " (direct window)"};
      if (rest.find_first_not_of("0123456789") != std::string::npos) {
        return ValueError(where, "\"" + s + "\"", "a direct window must be a positive integer, e.g. direct4",
                          DescribeIntRange(1, kMaxNpus));
      }
      ORRERY_PARSE_OR_RETURN(const int64_t window, ParseInt(rest, where, 1, kMaxNpus));
      spec.window = static_cast<int>(window);
    } else {
      std::vector<std::string> valid = BuiltinAlgorithmNames();
      valid.insert(valid.end(), plugin_algorithms.begin(), plugin_algorithms.end());
      std::string msg = path + ": \"" + key + "\"[" + std::to_string(i) + "] = \"" + s + "\": unknown algorithm";
      const std::string near = ClosestMatch(s, valid);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      return Status::Invalid(msg + "; valid: " + JoinStrings(valid, ", ") + " (direct<N> limits the window)");
    }
    out->push_back(spec);
  }
  return Status::Ok();
}

// Every key of `j` is one of `keys`.
Status CheckKnownKeys(const nlohmann::json& j, const std::string& path, const std::vector<std::string>& keys) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      return Status::Invalid(path + ": " + UnknownKeyMessage(it.key(), keys));
    }
  }
  return Status::Ok();
}

// The optional keys of a system JSON, each read into `out` when given.
struct SystemJson {
  const nlohmann::json& j;
  const std::string& path;

  Status String(const char* key, std::string* out, const char* allowed) const {
    if (!j.contains(key)) return Status::Ok();
    ORRERY_PARSE_OR_RETURN(*out, JsonString(path, j[key], key, allowed));
    return Status::Ok();
  }
  Status Count(const char* key, int64_t max, int* out) const {
    if (!j.contains(key)) return Status::Ok();
    ORRERY_PARSE_OR_RETURN(const int64_t v, JsonInt(path, j[key], key, 1, max));
    *out = static_cast<int>(v);
    return Status::Ok();
  }
  Status Number(const char* key, DoubleRange range, double* out) const {
    if (!j.contains(key)) return Status::Ok();
    ORRERY_PARSE_OR_RETURN(*out, JsonDouble(path, j[key], key, range));
    return Status::Ok();
  }
};

Status ReadSchedulingPolicy(const SystemJson& f, AstraSystemConfig* cfg) {
  std::string policy = "LIFO";
  ORRERY_RETURN_IF_ERROR(f.String("scheduling-policy", &policy, "LIFO, FIFO"));
  if (policy == "LIFO") {
    cfg->lifo = true;
  } else if (policy == "FIFO") {
    cfg->lifo = false;
  } else {
    return Status::Invalid(f.path + ": \"scheduling-policy\" = \"" + policy + "\": valid values are LIFO, FIFO");
  }
  return Status::Ok();
}

// Per collective, its algorithms per dimension (a custom trace prefix wins over the named algorithm).
Status ReadImplementations(const SystemJson& f, const std::vector<std::string>& plugin_algorithms,
                           AstraSystemConfig* cfg) {
  struct ImplKey {
    const char* key;
    const char* custom;
    std::vector<CollectiveImplSpec>* out;
  };
  ImplKey impls[] = {{"all-reduce-implementation", "all-reduce-implementation-custom", &cfg->all_reduce},
                     {"all-gather-implementation", "all-gather-implementation-custom", &cfg->all_gather},
                     {"reduce-scatter-implementation", "reduce-scatter-implementation-custom", &cfg->reduce_scatter},
                     {"all-to-all-implementation", "all-to-all-implementation-custom", &cfg->all_to_all}};
  for (auto& ik : impls) {
    if (f.j.contains(ik.custom)) {
      ORRERY_RETURN_IF_ERROR(ImplList(f.path, f.j, ik.custom, true, ik.out, plugin_algorithms));
    } else if (f.j.contains(ik.key)) {
      ORRERY_RETURN_IF_ERROR(ImplList(f.path, f.j, ik.key, false, ik.out, plugin_algorithms));
    }
  }
  return Status::Ok();
}

Status ReadCollectiveOptimization(const SystemJson& f, AstraSystemConfig* cfg) {
  std::string opt = "baseline";
  ORRERY_RETURN_IF_ERROR(f.String("collective-optimization", &opt, "baseline, localBWAware"));
  if (opt == "localBWAware") {
    cfg->local_bw_aware = true;
  } else if (opt != "baseline") {
    return Status::Invalid(f.path + ": \"collective-optimization\" = \"" + opt +
                           "\": valid values are baseline, localBWAware");
  }
  return Status::Ok();
}

// Local memory and in-switch bandwidths, peak performance and the roofline switch.
Status ReadComputeKeys(const SystemJson& f, AstraSystemConfig* cfg) {
  ORRERY_RETURN_IF_ERROR(f.Number("local-mem-bw", kBandwidthGBps, &cfg->local_mem_bw));
  ORRERY_RETURN_IF_ERROR(f.Number("in-switch-reduction-bw", kBytesPerNs, &cfg->in_switch_reduction_bw));
  ORRERY_RETURN_IF_ERROR(f.Number("peak-perf", kPeakPerfTflops, &cfg->peak_perf_tflops));
  // Orrery extension: the share of the SMs an NCCL collective holds while it runs (docs/formats.md).
  ORRERY_RETURN_IF_ERROR(f.Number("collective-sm-fraction", DoubleRange{0, 0.95, false}, &cfg->collective_sm_fraction));
  // Orrery extension: the accelerator the roofline stands for (`orrery gen --device --system-out`
  // writes it); run/ checks the name against the generator's presets.
  ORRERY_RETURN_IF_ERROR(f.String("device", &cfg->device, "a device name (orrery gen --list-devices)"));
  if (f.j.contains("device") && cfg->device.empty()) {
    return Status::Invalid(f.path +
                           ": \"device\" = \"\": empty; give a device name (orrery gen --list-devices) or "
                           "leave the key out");
  }
  if (f.j.contains("roofline-enabled")) {
    ORRERY_PARSE_OR_RETURN(cfg->roofline_enabled, JsonFlag(f.path, f.j["roofline-enabled"], "roofline-enabled"));
  }
  return Status::Ok();
}

// ASTRA-sim's keys Orrery does not model: still checked, so a typo'd value is not silently kept.
Status CheckUnmodelledKeys(const SystemJson& f) {
  for (const char* key : {"boost-mode", "track-local-mem", "model-shared-bus", "trace-enabled", "replay-only"}) {
    if (f.j.contains(key)) ORRERY_RETURN_IF_ERROR(JsonFlag(f.path, f.j[key], key).status());
  }
  for (const char* key : {"local-reduction-delay", "L", "o", "g", "G"}) {
    double ignored = 0;
    ORRERY_RETURN_IF_ERROR(f.Number(key, kNonNegative, &ignored));
  }
  std::string trace_file;
  return f.String("local-mem-trace-filename", &trace_file, "a file name");
}

Status ReadDimensionScheduling(const SystemJson& f, AstraSystemConfig* cfg) {
  ORRERY_RETURN_IF_ERROR(
      f.String("intra-dimension-scheduling", &cfg->intra_dimension_scheduling, "FIFO, SmallestFirst"));
  ORRERY_RETURN_IF_ERROR(
      f.String("inter-dimension-scheduling", &cfg->inter_dimension_scheduling, "baseline, ascending, themis"));
  if (cfg->intra_dimension_scheduling != "FIFO" && cfg->intra_dimension_scheduling != "SmallestFirst") {
    return Status::Invalid(f.path + ": \"intra-dimension-scheduling\" = \"" + cfg->intra_dimension_scheduling +
                           "\": valid values are FIFO, SmallestFirst");
  }
  if (cfg->inter_dimension_scheduling == "ascending") cfg->inter_dimension_scheduling = "baseline";
  if (cfg->inter_dimension_scheduling != "baseline" && cfg->inter_dimension_scheduling != "themis") {
    return Status::Invalid(f.path + ": \"inter-dimension-scheduling\" = \"" + cfg->inter_dimension_scheduling +
                           "\": valid values are baseline (alias ascending), themis");
  }
  return Status::Ok();
}

// Orrery extension: how collectives on communicator groups run and how a
// message across several dimensions is charged.
Status ReadGroupCollectiveModel(const SystemJson& f, AstraSystemConfig* cfg) {
  ORRERY_RETURN_IF_ERROR(f.String("group-collective-model", &cfg->group_collective_model, "astra-sim, hierarchical"));
  if (cfg->group_collective_model != "astra-sim" && cfg->group_collective_model != "hierarchical") {
    return Status::Invalid(f.path + ": \"group-collective-model\" = \"" + cfg->group_collective_model +
                           "\": valid values are astra-sim (ASTRA-sim's rules, the default), hierarchical (Orrery's "
                           "per-dimension model)");
  }
  return Status::Ok();
}

// "memory-type" (required): the kind, and its name as given into `type`.
Status ReadMemoryType(const nlohmann::json& j, const std::string& path, std::string* type,
                      AstraRemoteMemoryConfig* cfg) {
  const std::string types = "NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, MEMORY_POOL";
  if (!j.contains("memory-type")) return Status::Invalid(path + ": missing \"memory-type\"; valid: " + types);
  ORRERY_PARSE_OR_RETURN(const std::string t, JsonString(path, j["memory-type"], "memory-type", types));
  *type = t;
  if (t == "NO_MEMORY_EXPANSION") {
    cfg->kind = RemoteMemoryKind::kNone;
  } else if (t == "PER_NPU_MEMORY_EXPANSION") {
    cfg->kind = RemoteMemoryKind::kPerNpu;
  } else if (t == "PER_NODE_MEMORY_EXPANSION") {
    cfg->kind = RemoteMemoryKind::kPerNode;
  } else if (t == "MEMORY_POOL") {
    cfg->kind = RemoteMemoryKind::kPool;
  } else {
    return Status::Invalid(path + ": \"memory-type\" = \"" + t + "\": valid values are " + types);
  }
  return Status::Ok();
}

// A key the memory type needs must be there; one it does not need is still checked when given.
Status CheckNeededKeys(const nlohmann::json& j, const std::string& path, const std::string& type,
                       RemoteMemoryKind kind) {
  auto need = [&](const char* key, bool needed) -> Status {
    if (!j.contains(key) && needed)
      return Status::Invalid(path + ": \"memory-type\" " + type + " needs \"" + key + "\"");
    return Status::Ok();
  };
  const bool remote = kind != RemoteMemoryKind::kNone;
  ORRERY_RETURN_IF_ERROR(need("remote-mem-latency", remote));
  ORRERY_RETURN_IF_ERROR(need("remote-mem-bw", remote));
  ORRERY_RETURN_IF_ERROR(need("num-nodes", kind == RemoteMemoryKind::kPerNode));
  ORRERY_RETURN_IF_ERROR(need("num-npus-per-node", kind == RemoteMemoryKind::kPerNode));
  return Status::Ok();
}

// "num-nodes" x "num-npus-per-node", kept for PER_NODE_MEMORY_EXPANSION.
Status ReadNodes(const nlohmann::json& j, const std::string& path, AstraRemoteMemoryConfig* cfg) {
  int64_t nodes = 0, per = 0, total = 0;
  if (j.contains("num-nodes")) {
    ORRERY_PARSE_OR_RETURN(nodes, JsonInt(path, j["num-nodes"], "num-nodes", 1, kMaxNpus));
  }
  if (j.contains("num-npus-per-node")) {
    ORRERY_PARSE_OR_RETURN(per, JsonInt(path, j["num-npus-per-node"], "num-npus-per-node", 1, kMaxNpus));
  }
  if (nodes > 0 && per > 0 && !MulWithin(nodes, per, kMaxNpus, &total)) {
    return ValueError(Where{path, 0, "num-nodes x num-npus-per-node"},
                      std::to_string(nodes) + " x " + std::to_string(per), "more NPUs than Orrery simulates",
                      "a product <= " + std::to_string(kMaxNpus) + " (the network's NPU count)");
  }
  if (cfg->kind == RemoteMemoryKind::kPerNode) {
    cfg->num_nodes = static_cast<int>(nodes);
    cfg->npus_per_node = static_cast<int>(per);
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& AstraSystemKeys() { return SystemKeys(); }

Result<AstraSystemConfig> ReadAstraSystemJson(const std::string& path,
                                              const std::vector<std::string>& plugin_algorithms) {
  Result<nlohmann::json> parsed = ReadJsonFile(path);
  if (!parsed.ok()) return parsed.status();
  return ParseAstraSystemJson(parsed.value(), path, plugin_algorithms);
}

Result<AstraSystemConfig> ParseAstraSystemJson(const nlohmann::json& j, const std::string& path,
                                               const std::vector<std::string>& plugin_algorithms) {
  if (!j.is_object()) return Status::Invalid(path + ": expected a JSON object of system settings");
  ORRERY_RETURN_IF_ERROR(CheckKnownKeys(j, path, SystemKeys()));
  AstraSystemConfig cfg;
  cfg.path = path;
  const SystemJson f{j, path};
  ORRERY_RETURN_IF_ERROR(ReadSchedulingPolicy(f, &cfg));
  if (j.contains("endpoint-delay")) {
    cfg.endpoint_delay_given = true;
    ORRERY_PARSE_OR_RETURN(cfg.endpoint_delay_ns,
                           JsonUint(path, j["endpoint-delay"], "endpoint-delay", 0, kMaxLatencyNs));
  }
  ORRERY_RETURN_IF_ERROR(f.Count("active-chunks-per-dimension", kMaxActiveChunks, &cfg.active_chunks_per_dimension));
  ORRERY_RETURN_IF_ERROR(f.Count("preferred-dataset-splits", kMaxDatasetSplits, &cfg.preferred_dataset_splits));
  ORRERY_RETURN_IF_ERROR(ReadImplementations(f, plugin_algorithms, &cfg));
  ORRERY_RETURN_IF_ERROR(ReadCollectiveOptimization(f, &cfg));
  ORRERY_RETURN_IF_ERROR(ReadComputeKeys(f, &cfg));
  ORRERY_RETURN_IF_ERROR(CheckUnmodelledKeys(f));
  if (cfg.roofline_enabled && (cfg.peak_perf_tflops <= 0 || cfg.local_mem_bw <= 0)) {
    return Status::Invalid(path +
                           ": \"roofline-enabled\" needs both \"peak-perf\" (TFLOPS) and \"local-mem-bw\" (GB/s)");
  }
  ORRERY_RETURN_IF_ERROR(ReadDimensionScheduling(f, &cfg));
  ORRERY_RETURN_IF_ERROR(ReadGroupCollectiveModel(f, &cfg));
  return cfg;
}

Result<AstraRemoteMemoryConfig> ReadAstraRemoteMemoryJson(const std::string& path) {
  Result<nlohmann::json> parsed = ReadJsonFile(path);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object()) return Status::Invalid(path + ": expected a JSON object");
  ORRERY_RETURN_IF_ERROR(
      CheckKnownKeys(j, path,
                     {"memory-type", "remote-mem-latency", "remote-mem-bw", "num-nodes", "num-npus-per-node"}));
  AstraRemoteMemoryConfig cfg;
  std::string type;
  ORRERY_RETURN_IF_ERROR(ReadMemoryType(j, path, &type, &cfg));
  ORRERY_RETURN_IF_ERROR(CheckNeededKeys(j, path, type, cfg.kind));
  if (j.contains("remote-mem-latency")) {
    ORRERY_PARSE_OR_RETURN(cfg.latency_ns,
                           JsonUint(path, j["remote-mem-latency"], "remote-mem-latency", 0, kMaxLatencyNs));
  }
  if (j.contains("remote-mem-bw")) {
    ORRERY_PARSE_OR_RETURN(cfg.bandwidth_bytes_per_ns,
                           JsonDouble(path, j["remote-mem-bw"], "remote-mem-bw", kBandwidthGBps));
  }
  ORRERY_RETURN_IF_ERROR(ReadNodes(j, path, &cfg));
  return cfg;
}

Result<FlatYaml> ReadFlatYaml(const std::string& path) {
  auto loaded = LoadYaml(path);
  if (!loaded.ok()) return loaded.status();
  YAML::Node root = loaded.value();
  if (!root.IsMap()) return Status::Invalid(path + ": expected a YAML mapping of settings (key: value)");
  FlatYaml out;
  out.path = path;
  for (auto it = root.begin(); it != root.end(); ++it) {
    ORRERY_PARSE_OR_RETURN(const std::string key, YamlKey(path, it->first));
    ORRERY_PARSE_OR_RETURN(const std::string value, YamlString(path, it->second, key, "value"));
    if (out.values.count(key)) {
      return Status::Invalid(YamlWhere(path, it->first, key).Describe() + ": given twice (line " +
                             std::to_string(out.lines[key]) + " and here)");
    }
    out.values[key] = value;
    out.lines[key] = YamlWhere(path, it->second, key).line;
  }
  return out;
}

Result<std::map<std::string, std::vector<int>>> ReadCommGroupJson(const std::string& path, int64_t npus) {
  Result<nlohmann::json> parsed = ReadJsonFile(path);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object()) return Status::Invalid(path + ": expected an object {\"<group id>\": [ranks...]}");
  std::map<std::string, std::vector<int>> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_array() || it.value().empty()) {
      return Status::Invalid(path + ": group \"" + it.key() + "\" must be a non-empty list of ranks");
    }
    std::set<int> seen;
    std::vector<int> ranks;
    for (size_t i = 0; i < it.value().size(); ++i) {
      const nlohmann::json& r = it.value()[i];
      const std::string key = "\"" + it.key() + "\"[" + std::to_string(i) + "]";
      ORRERY_PARSE_OR_RETURN(const int64_t rank64, JsonInt(path, r, key, INT64_MIN, INT64_MAX));
      if (rank64 < 0 || rank64 >= npus) {
        return ValueError(Where{path, 0, key}, r.dump(),
                          "group \"" + it.key() + "\" has rank " + r.dump() + ", outside the network's ranks 0.." +
                              std::to_string(npus - 1),
                          DescribeIntRange(0, npus - 1));
      }
      const int rank = static_cast<int>(rank64);
      if (!seen.insert(rank).second) {
        return Status::Invalid(path + ": group \"" + it.key() + "\" lists rank " + std::to_string(rank) + " twice");
      }
      ranks.push_back(rank);
    }
    out[it.key()] = ranks;
  }
  return out;
}

}  // namespace orrery
