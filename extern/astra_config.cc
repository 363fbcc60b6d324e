#include "extern/astra_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>

#include "extern/json_util.h"

namespace orrery {

namespace {

std::string Where(const std::string& path, const YAML::Mark& m) {
  if (m.line < 0) return path;
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

template <typename T>
Status YamlList(const std::string& path, const YAML::Node& root, const char* key, std::vector<T>* out) {
  YAML::Node n = root[key];
  if (!n) return Status::Invalid(path + ": missing key '" + key + "' (one entry per network dimension)");
  if (!n.IsSequence()) return Status::Invalid(Where(path, n.Mark()) + ": '" + key + "' must be a list, e.g. [ 8 ]");
  for (size_t i = 0; i < n.size(); ++i) {
    try {
      out->push_back(n[i].as<T>());
    } catch (const YAML::Exception&) {
      return Status::Invalid(Where(path, n[i].Mark()) + ": " + key + "[" + std::to_string(i) + "] = '" +
                             n[i].Scalar() + "' is not a valid " +
                             (std::is_same_v<T, std::string> ? "name" : "number"));
    }
  }
  return Status::Ok();
}

// Reads and parses a YAML file; a syntax error names file:line:column.
Result<YAML::Node> LoadYaml(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  try {
    return YAML::Load(text.value());
  } catch (const YAML::ParserException& e) {
    return Status::Invalid(Where(path, e.mark) + ": malformed YAML: " + e.msg);
  }
}

Result<AstraNetworkConfig> ReadOrreryNetwork(const std::string& path, const YAML::Node& root) {
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (key != "dims") return Status::Invalid(Where(path, it->first.Mark()) + ": " + UnknownKeyMessage(key, {"dims"}));
  }
  const YAML::Node dims = root["dims"];
  if (!dims.IsSequence() || dims.size() == 0) {
    return Status::Invalid(Where(path, dims.Mark()) + ": 'dims' must be a non-empty list of dimensions");
  }
  const std::vector<std::string> keys = {"block", "npus", "bandwidth_gbps", "latency_ns", "links_per_npu"};
  const std::vector<std::string> blocks = {"Ring", "RingUni", "Mesh", "FullyConnected", "Switch"};
  AstraNetworkConfig cfg;
  int64_t total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const YAML::Node d = dims[i];
    const std::string at = path + ": dims[" + std::to_string(i) + "]";
    if (!d.IsMap()) return Status::Invalid(Where(path, d.Mark()) + ": dims[" + std::to_string(i) + "] must be a mapping");
    for (auto it = d.begin(); it != d.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        return Status::Invalid(Where(path, it->first.Mark()) + ": dims[" + std::to_string(i) + "]: " + UnknownKeyMessage(key, keys));
      }
    }
    for (const char* req : {"block", "npus", "bandwidth_gbps", "latency_ns"}) {
      if (!d[req]) return Status::Invalid(at + ": missing '" + req + "'");
    }
    AstraNetworkDim x;
    try {
      x.block = d["block"].as<std::string>();
      const int64_t npus = d["npus"].as<int64_t>();
      x.bandwidth_gbps = d["bandwidth_gbps"].as<double>();
      x.latency_ns = d["latency_ns"].as<double>();
      x.links_per_npu = d["links_per_npu"] ? d["links_per_npu"].as<int>() : 1;
      if (npus < 2 || npus > (1 << 26)) {
        return Status::Invalid(at + ".npus = " + std::to_string(npus) + ": a dimension needs at least 2 NPUs");
      }
      x.npus = static_cast<int>(npus);
    } catch (const YAML::Exception& e) {
      return Status::Invalid(Where(path, e.mark) + ": dims[" + std::to_string(i) + "]: wrong type (" + e.msg + ")");
    }
    if (std::find(blocks.begin(), blocks.end(), x.block) == blocks.end()) {
      std::string msg = at + ".block = \"" + x.block + "\": unknown building block";
      const std::string near = ClosestMatch(x.block, blocks);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      return Status::Invalid(msg + "; valid: " + JoinStrings(blocks, ", "));
    }
    if (!(x.bandwidth_gbps > 0) || !std::isfinite(x.bandwidth_gbps)) {
      return Status::Invalid(at + ".bandwidth_gbps = " + std::to_string(x.bandwidth_gbps) + ": must be positive");
    }
    if (!(x.latency_ns >= 0) || !std::isfinite(x.latency_ns)) {
      return Status::Invalid(at + ".latency_ns = " + std::to_string(x.latency_ns) + ": must be zero or positive");
    }
    if (x.links_per_npu < 1) return Status::Invalid(at + ".links_per_npu = " + std::to_string(x.links_per_npu) + ": must be >= 1");
    total *= x.npus;
    if (total > (int64_t{1} << 26)) return Status::Invalid(path + ": more than 2^26 NPUs in total");
    cfg.dims.push_back(x);
  }
  return cfg;
}

}  // namespace

Result<AstraNetworkConfig> ReadAstraNetworkYaml(const std::string& path) {
  auto loaded = LoadYaml(path);
  if (!loaded.ok()) return loaded.status();
  YAML::Node root = loaded.value();
  if (!root.IsMap()) return Status::Invalid(path + ": expected a YAML mapping with keys topology, npus_count, bandwidth, latency");
  if (root["dims"]) return ReadOrreryNetwork(path, root);
  const std::vector<std::string> valid = {"topology", "npus_count", "bandwidth", "latency"};
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
      return Status::Invalid(Where(path, it->first.Mark()) + ": " + UnknownKeyMessage(key, valid));
    }
  }
  std::vector<std::string> topo;
  std::vector<int64_t> npus;
  std::vector<double> bw, lat;
  ORRERY_RETURN_IF_ERROR(YamlList(path, root, "topology", &topo));
  ORRERY_RETURN_IF_ERROR(YamlList(path, root, "npus_count", &npus));
  ORRERY_RETURN_IF_ERROR(YamlList(path, root, "bandwidth", &bw));
  ORRERY_RETURN_IF_ERROR(YamlList(path, root, "latency", &lat));
  if (topo.empty()) return Status::Invalid(path + ": 'topology' is empty; give at least one dimension, e.g. [ Ring ]");
  if (npus.size() != topo.size() || bw.size() != topo.size() || lat.size() != topo.size()) {
    return Status::Invalid(path + ": list lengths disagree: topology has " + std::to_string(topo.size()) +
                           " dimensions, npus_count " + std::to_string(npus.size()) + ", bandwidth " +
                           std::to_string(bw.size()) + ", latency " + std::to_string(lat.size()) +
                           "; give one entry per dimension in each");
  }
  AstraNetworkConfig cfg;
  const std::vector<std::string> blocks = {"Ring", "FullyConnected", "Switch"};
  int64_t total = 1;
  for (size_t i = 0; i < topo.size(); ++i) {
    const std::string idx = "[" + std::to_string(i) + "]";
    if (std::find(blocks.begin(), blocks.end(), topo[i]) == blocks.end()) {
      std::string msg = path + ": topology" + idx + " = \"" + topo[i] + "\": unknown building block";
      const std::string near = ClosestMatch(topo[i], blocks);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      return Status::Invalid(msg + "; valid: Ring, FullyConnected, Switch");
    }
    if (npus[i] < 2) {
      return Status::Invalid(path + ": npus_count" + idx + " = " + std::to_string(npus[i]) +
                             ": a dimension needs at least 2 NPUs (drop a dimension of 1)");
    }
    if (!(bw[i] > 0) || !std::isfinite(bw[i])) {
      return Status::Invalid(path + ": bandwidth" + idx + " = " + std::to_string(bw[i]) +
                             ": bandwidth must be a positive number of GB/s");
    }
    if (!(lat[i] >= 0) || !std::isfinite(lat[i])) {
      return Status::Invalid(path + ": latency" + idx + " = " + std::to_string(lat[i]) +
                             ": latency must be zero or a positive number of ns");
    }
    total *= npus[i];
    if (total > (int64_t{1} << 26)) return Status::Invalid(path + ": npus_count: more than 2^26 NPUs in total");
    cfg.dims.push_back(AstraNetworkDim{topo[i], static_cast<int>(npus[i]), bw[i], lat[i]});
  }
  return cfg;
}

namespace {

const std::vector<std::string>& SystemKeys() {
  static const std::vector<std::string> keys = {
      "scheduling-policy", "endpoint-delay", "active-chunks-per-dimension", "preferred-dataset-splits",
      "all-reduce-implementation", "all-gather-implementation", "reduce-scatter-implementation",
      "all-to-all-implementation", "all-reduce-implementation-custom", "all-gather-implementation-custom",
      "reduce-scatter-implementation-custom", "all-to-all-implementation-custom", "collective-optimization",
      "local-mem-bw", "boost-mode", "roofline-enabled", "peak-perf", "track-local-mem",
      "local-mem-trace-filename", "local-reduction-delay", "model-shared-bus", "intra-dimension-scheduling",
      "inter-dimension-scheduling", "trace-enabled", "replay-only", "L", "o", "g", "G", "in-switch-reduction-bw"};
  return keys;
}

Result<double> Number(const std::string& path, const nlohmann::json& j, const std::string& key) {
  const auto& v = j.at(key);
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return Status::Invalid(path + ": \"" + key + "\" = " + v.dump() + ": expected a number");
}

Status ImplList(const std::string& path, const nlohmann::json& j, const std::string& key, bool custom,
                std::vector<CollectiveImplSpec>* out, const std::vector<std::string>& plugin_algorithms) {
  const auto& v = j.at(key);
  if (!v.is_array()) return Status::Invalid(path + ": \"" + key + "\" must be a list with one entry per dimension");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      return Status::Invalid(path + ": \"" + key + "\"[" + std::to_string(i) + "] = " + v[i].dump() +
                             ": expected a string");
    }
    const std::string s = v[i].get<std::string>();
    CollectiveImplSpec spec;
    spec.name = s;
    if (custom) {
      spec.kind = CollectiveImplKind::kCustom;
      spec.custom_prefix = s;
    } else if (std::find(plugin_algorithms.begin(), plugin_algorithms.end(), s) != plugin_algorithms.end()) {
      spec.kind = CollectiveImplKind::kPlugin;
    } else if (s == "ring") {
      spec.kind = CollectiveImplKind::kRing;
    } else if (s == "oneRing") {
      spec.kind = CollectiveImplKind::kOneRing;
    } else if (s == "inSwitch") {
      spec.kind = CollectiveImplKind::kInSwitch;
    } else if (s == "halvingDoubling") {
      spec.kind = CollectiveImplKind::kHalvingDoubling;
    } else if (s == "oneHalvingDoubling") {
      spec.kind = CollectiveImplKind::kOneHalvingDoubling;
    } else if (s == "doubleBinaryTree") {
      spec.kind = CollectiveImplKind::kDoubleBinaryTree;
    } else if (s.rfind("oneDirect", 0) == 0 || s.rfind("direct", 0) == 0) {
      const bool one = s.rfind("oneDirect", 0) == 0;
      spec.kind = one ? CollectiveImplKind::kOneDirect : CollectiveImplKind::kDirect;
      const std::string rest = s.substr(one ? 9 : 6);
      if (!rest.empty()) {
        if (rest.find_first_not_of("0123456789") != std::string::npos || rest.size() > 6 || std::stoi(rest) < 1) {
          return Status::Invalid(path + ": \"" + key + "\"[" + std::to_string(i) + "] = \"" + s +
                                 "\": a direct window must be a positive integer, e.g. direct4");
        }
        spec.window = std::stoi(rest);
      }
    } else {
      std::vector<std::string> valid = {"ring", "direct", "halvingDoubling", "doubleBinaryTree",
                                        "oneRing", "oneDirect", "oneHalvingDoubling", "inSwitch"};
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

}  // namespace

Result<AstraSystemConfig> ReadAstraSystemJson(const std::string& path,
                                              const std::vector<std::string>& plugin_algorithms) {
  Result<nlohmann::json> parsed = ReadJsonFile(path);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object()) return Status::Invalid(path + ": expected a JSON object of system settings");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& keys = SystemKeys();
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      return Status::Invalid(path + ": " + UnknownKeyMessage(it.key(), keys));
    }
  }
  AstraSystemConfig cfg;
  cfg.path = path;
  auto str = [&](const char* key, std::string* out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_string()) return Status::Invalid(path + ": \"" + key + "\" = " + j[key].dump() + ": expected a string");
    *out = j[key].get<std::string>();
    return Status::Ok();
  };
  std::string policy = "LIFO";
  ORRERY_RETURN_IF_ERROR(str("scheduling-policy", &policy));
  if (policy == "LIFO") {
    cfg.lifo = true;
  } else if (policy == "FIFO") {
    cfg.lifo = false;
  } else {
    return Status::Invalid(path + ": \"scheduling-policy\" = \"" + policy + "\": valid values are LIFO, FIFO");
  }
  if (j.contains("endpoint-delay")) {
    cfg.endpoint_delay_given = true;
    auto v = Number(path, j, "endpoint-delay");
    if (!v.ok()) return v.status();
    if (v.value() < 0) return Status::Invalid(path + ": \"endpoint-delay\" = " + j["endpoint-delay"].dump() + ": must be >= 0 ns");
    cfg.endpoint_delay_ns = static_cast<uint64_t>(v.value());
  }
  auto positive_int = [&](const char* key, int* out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    auto v = Number(path, j, key);
    if (!v.ok()) return v.status();
    if (v.value() < 1 || v.value() != std::floor(v.value()) || v.value() > 1e6) {
      return Status::Invalid(path + ": \"" + key + "\" = " + j[key].dump() + ": must be a positive integer");
    }
    *out = static_cast<int>(v.value());
    return Status::Ok();
  };
  ORRERY_RETURN_IF_ERROR(positive_int("active-chunks-per-dimension", &cfg.active_chunks_per_dimension));
  ORRERY_RETURN_IF_ERROR(positive_int("preferred-dataset-splits", &cfg.preferred_dataset_splits));
  struct ImplKey { const char* key; const char* custom; std::vector<CollectiveImplSpec>* out; };
  ImplKey impls[] = {{"all-reduce-implementation", "all-reduce-implementation-custom", &cfg.all_reduce},
                     {"all-gather-implementation", "all-gather-implementation-custom", &cfg.all_gather},
                     {"reduce-scatter-implementation", "reduce-scatter-implementation-custom", &cfg.reduce_scatter},
                     {"all-to-all-implementation", "all-to-all-implementation-custom", &cfg.all_to_all}};
  for (auto& ik : impls) {
    if (j.contains(ik.custom)) {
      ORRERY_RETURN_IF_ERROR(ImplList(path, j, ik.custom, true, ik.out, plugin_algorithms));
    } else if (j.contains(ik.key)) {
      ORRERY_RETURN_IF_ERROR(ImplList(path, j, ik.key, false, ik.out, plugin_algorithms));
    }
  }
  std::string opt = "baseline";
  ORRERY_RETURN_IF_ERROR(str("collective-optimization", &opt));
  if (opt == "localBWAware") {
    cfg.local_bw_aware = true;
  } else if (opt != "baseline") {
    return Status::Invalid(path + ": \"collective-optimization\" = \"" + opt + "\": valid values are baseline, localBWAware");
  }
  if (j.contains("local-mem-bw")) {
    auto v = Number(path, j, "local-mem-bw");
    if (!v.ok()) return v.status();
    if (!(v.value() > 0)) return Status::Invalid(path + ": \"local-mem-bw\" = " + j["local-mem-bw"].dump() + ": must be a positive bandwidth");
    cfg.local_mem_bw = v.value();
  }
  if (j.contains("in-switch-reduction-bw")) {
    auto v = Number(path, j, "in-switch-reduction-bw");
    if (!v.ok()) return v.status();
    if (!(v.value() > 0)) {
      return Status::Invalid(path + ": \"in-switch-reduction-bw\" = " + j["in-switch-reduction-bw"].dump() +
                             ": must be a positive number of bytes per ns");
    }
    cfg.in_switch_reduction_bw = v.value();
  }
  if (j.contains("roofline-enabled")) {
    auto v = Number(path, j, "roofline-enabled");
    if (!v.ok()) return v.status();
    cfg.roofline_enabled = v.value() != 0;
  }
  if (j.contains("peak-perf")) {
    auto v = Number(path, j, "peak-perf");
    if (!v.ok()) return v.status();
    if (!(v.value() > 0)) return Status::Invalid(path + ": \"peak-perf\" = " + j["peak-perf"].dump() + ": must be a positive TFLOPS figure");
    cfg.peak_perf_tflops = v.value();
  }
  if (cfg.roofline_enabled && (cfg.peak_perf_tflops <= 0 || cfg.local_mem_bw <= 0)) {
    return Status::Invalid(path + ": \"roofline-enabled\" needs both \"peak-perf\" (TFLOPS) and \"local-mem-bw\" (GB/s)");
  }
  ORRERY_RETURN_IF_ERROR(str("intra-dimension-scheduling", &cfg.intra_dimension_scheduling));
  ORRERY_RETURN_IF_ERROR(str("inter-dimension-scheduling", &cfg.inter_dimension_scheduling));
  if (cfg.intra_dimension_scheduling != "FIFO" && cfg.intra_dimension_scheduling != "SmallestFirst") {
    return Status::Invalid(path + ": \"intra-dimension-scheduling\" = \"" + cfg.intra_dimension_scheduling +
                           "\": valid values are FIFO, SmallestFirst");
  }
  if (cfg.inter_dimension_scheduling == "ascending") cfg.inter_dimension_scheduling = "baseline";
  if (cfg.inter_dimension_scheduling != "baseline" && cfg.inter_dimension_scheduling != "themis") {
    return Status::Invalid(path + ": \"inter-dimension-scheduling\" = \"" + cfg.inter_dimension_scheduling +
                           "\": valid values are baseline (alias ascending), themis");
  }
  return cfg;
}

Result<AstraRemoteMemoryConfig> ReadAstraRemoteMemoryJson(const std::string& path) {
  Result<nlohmann::json> parsed = ReadJsonFile(path);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object()) return Status::Invalid(path + ": expected a JSON object");
  const std::vector<std::string> keys = {"memory-type", "remote-mem-latency", "remote-mem-bw", "num-nodes",
                                         "num-npus-per-node"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      return Status::Invalid(path + ": " + UnknownKeyMessage(it.key(), keys));
    }
  }
  AstraRemoteMemoryConfig cfg;
  if (!j.contains("memory-type") || !j["memory-type"].is_string()) {
    return Status::Invalid(path + ": missing \"memory-type\"; valid: NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, "
                           "PER_NODE_MEMORY_EXPANSION, MEMORY_POOL");
  }
  const std::string t = j["memory-type"].get<std::string>();
  if (t == "NO_MEMORY_EXPANSION") {
    cfg.kind = RemoteMemoryKind::kNone;
    return cfg;
  } else if (t == "PER_NPU_MEMORY_EXPANSION") {
    cfg.kind = RemoteMemoryKind::kPerNpu;
  } else if (t == "PER_NODE_MEMORY_EXPANSION") {
    cfg.kind = RemoteMemoryKind::kPerNode;
  } else if (t == "MEMORY_POOL") {
    cfg.kind = RemoteMemoryKind::kPool;
  } else {
    return Status::Invalid(path + ": \"memory-type\" = \"" + t + "\": valid values are NO_MEMORY_EXPANSION, "
                           "PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, MEMORY_POOL");
  }
  auto num = [&](const char* key, double* out) -> Status {
    if (!j.contains(key)) return Status::Invalid(path + ": \"memory-type\" " + t + " needs \"" + key + "\"");
    if (!j[key].is_number()) return Status::Invalid(path + ": \"" + key + "\" = " + j[key].dump() + ": expected a number");
    *out = j[key].get<double>();
    return Status::Ok();
  };
  double lat = 0, bw = 0;
  ORRERY_RETURN_IF_ERROR(num("remote-mem-latency", &lat));
  ORRERY_RETURN_IF_ERROR(num("remote-mem-bw", &bw));
  if (lat < 0) return Status::Invalid(path + ": \"remote-mem-latency\" = " + j["remote-mem-latency"].dump() + ": must be >= 0 ns");
  if (!(bw > 0)) return Status::Invalid(path + ": \"remote-mem-bw\" = " + j["remote-mem-bw"].dump() + ": must be a positive GB/s");
  cfg.latency_ns = static_cast<uint64_t>(lat);
  cfg.bandwidth_bytes_per_ns = bw;
  if (cfg.kind == RemoteMemoryKind::kPerNode) {
    double nodes = 0, per = 0;
    ORRERY_RETURN_IF_ERROR(num("num-nodes", &nodes));
    ORRERY_RETURN_IF_ERROR(num("num-npus-per-node", &per));
    if (nodes < 1 || per < 1) return Status::Invalid(path + ": \"num-nodes\" and \"num-npus-per-node\" must be >= 1");
    cfg.num_nodes = static_cast<int>(nodes);
    cfg.npus_per_node = static_cast<int>(per);
  }
  return cfg;
}

Result<std::map<std::string, std::string>> ReadFlatYaml(const std::string& path) {
  auto loaded = LoadYaml(path);
  if (!loaded.ok()) return loaded.status();
  YAML::Node root = loaded.value();
  if (!root.IsMap()) return Status::Invalid(path + ": expected a YAML mapping of settings (key: value)");
  std::map<std::string, std::string> out;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->second.IsScalar()) {
      return Status::Invalid(Where(path, it->second.Mark()) + ": '" + it->first.as<std::string>() +
                             "' must be a single value");
    }
    out[it->first.as<std::string>()] = it->second.Scalar();
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
    for (const auto& r : it.value()) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= npus) {
        return Status::Invalid(path + ": group \"" + it.key() + "\" has rank " + r.dump() +
                               ", outside the network's ranks 0.." + std::to_string(npus - 1));
      }
      const int rank = r.get<int>();
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
