// The network YAML readers: ASTRA-sim's lists (topology, npus_count, bandwidth,
// latency) and Orrery's `dims:` mapping. Every value is read by the checked
// routine with its file and line; the NPU total is multiplied overflow-safely
// and capped at kMaxNpus before anything is allocated.
#include <algorithm>
#include <map>

#include "core/limits.h"
#include "extern/astra_config.h"
#include "extern/config_values.h"
#include "extern/json_util.h"

namespace orrery {
namespace {

std::string Index(const std::string& key, size_t i) { return key + "[" + std::to_string(i) + "]"; }

// An NPU count of one dimension: an integer 2..kMaxNpus, or 1 when it is the
// network's only dimension (a single NPU: a one-rank trace).
Result<int> DimNpus(const std::string& path, const YAML::Node& node, const std::string& key, bool only_dim) {
  const int64_t min = only_dim ? 1 : 2;
  auto n = YamlInt(path, node, key, min, kMaxNpus);
  if (n.ok()) return static_cast<int>(n.value());
  // A whole number outside the range gets a message that says why.
  const Where where = YamlWhere(path, node, key);
  const std::string allowed = DescribeIntRange(min, kMaxNpus);
  if (auto low = YamlInt(path, node, key, INT64_MIN, min - 1); low.ok()) {
    return ValueError(where, std::to_string(low.value()),
                      only_dim ? "a network needs at least 1 NPU"
                               : "a dimension needs at least 2 NPUs (drop a dimension of 1; a network of one NPU "
                                 "is a single dimension of 1)",
                      allowed);
  }
  if (auto high = YamlInt(path, node, key, kMaxNpus + 1, INT64_MAX); high.ok()) {
    return ValueError(where, std::to_string(high.value()), "more NPUs than Orrery simulates", allowed);
  }
  return n.status();
}

// Multiplies the running NPU total by one dimension's count, refusing totals over kMaxNpus.
Status AddToTotal(const std::string& path, const YAML::Node& node, const std::string& key, int npus, int64_t* total) {
  if (!MulWithin(*total, npus, kMaxNpus, total)) {
    return ValueError(YamlWhere(path, node, key), std::to_string(npus),
                      "the network would have more than " + std::to_string(kMaxNpus) + " NPUs in total",
                      "a product of all dimensions' NPU counts <= " + std::to_string(kMaxNpus));
  }
  return Status::Ok();
}

Status CheckBlock(const std::string& path, const YAML::Node& node, const std::string& key, const std::string& block,
                  const std::vector<std::string>& blocks) {
  if (std::find(blocks.begin(), blocks.end(), block) != blocks.end()) return Status::Ok();
  std::string what = "unknown building block";
  const std::string near = ClosestMatch(block, blocks);
  if (!near.empty()) what += " (did you mean '" + near + "'?)";
  return ValueError(YamlWhere(path, node, key), "\"" + block + "\"", what, JoinStrings(blocks, ", "));
}

Status CheckKeys(const std::string& path, const YAML::Node& map, const std::vector<std::string>& valid,
                 const std::string& prefix) {
  std::map<std::string, int> seen;  // key -> line
  for (auto it = map.begin(); it != map.end(); ++it) {
    ORRERY_PARSE_OR_RETURN(const std::string key, YamlKey(path, it->first));
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
      return Status::Invalid(YamlWhere(path, it->first, "").Describe() + ": " + prefix + UnknownKeyMessage(key, valid));
    }
    const Where where = YamlWhere(path, it->first, prefix + key);
    if (!seen.emplace(key, where.line).second) {
      return Status::Invalid(where.Describe() + ": given twice (line " + std::to_string(seen[key]) + " and here)");
    }
  }
  return Status::Ok();
}

Result<AstraNetworkConfig> ReadOrreryNetwork(const std::string& path, const YAML::Node& root) {
  ORRERY_RETURN_IF_ERROR(CheckKeys(path, root, {"dims"}, ""));
  const YAML::Node dims = root["dims"];
  if (!dims.IsSequence() || dims.size() == 0) {
    return Status::Invalid(YamlWhere(path, dims, "dims").Describe() +
                           ": 'dims' must be a non-empty list of dimensions");
  }
  const std::vector<std::string> keys = {"block", "npus", "bandwidth_gbps", "latency_ns", "links_per_npu"};
  const std::vector<std::string> blocks = {"Ring", "RingUni", "Mesh", "FullyConnected", "Switch"};
  AstraNetworkConfig cfg;
  int64_t total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const YAML::Node d = dims[i];
    const std::string at = Index("dims", i);
    if (!d.IsMap()) return Status::Invalid(YamlWhere(path, d, at).Describe() + " must be a mapping");
    ORRERY_RETURN_IF_ERROR(CheckKeys(path, d, keys, at + ": "));
    for (const char* req : {"block", "npus", "bandwidth_gbps", "latency_ns"}) {
      if (!d[req]) return Status::Invalid(YamlWhere(path, d, at).Describe() + ": missing '" + req + "'");
    }
    AstraNetworkDim x;
    ORRERY_PARSE_OR_RETURN(x.block, YamlString(path, d["block"], at + ".block"));
    ORRERY_RETURN_IF_ERROR(CheckBlock(path, d["block"], at + ".block", x.block, blocks));
    ORRERY_PARSE_OR_RETURN(x.npus, DimNpus(path, d["npus"], at + ".npus", dims.size() == 1));
    ORRERY_PARSE_OR_RETURN(x.bandwidth_gbps,
                           YamlDouble(path, d["bandwidth_gbps"], at + ".bandwidth_gbps", kBandwidthGBps));
    ORRERY_PARSE_OR_RETURN(x.latency_ns, YamlDouble(path, d["latency_ns"], at + ".latency_ns", kLatencyNs));
    if (d["links_per_npu"]) {
      ORRERY_PARSE_OR_RETURN(const int64_t links,
                             YamlInt(path, d["links_per_npu"], at + ".links_per_npu", 1, kMaxLinksPerNpu));
      x.links_per_npu = static_cast<int>(links);
    }
    ORRERY_RETURN_IF_ERROR(AddToTotal(path, d["npus"], at + ".npus", x.npus, &total));
    cfg.dims.push_back(x);
  }
  return cfg;
}

// One list of ASTRA-sim's network YAML: present, a list.
Result<YAML::Node> AstraList(const std::string& path, const YAML::Node& root, const char* key) {
  YAML::Node n = root[key];
  if (!n) return Status::Invalid(path + ": missing key '" + key + "' (one entry per network dimension)");
  if (!n.IsSequence()) {
    return ValueError(YamlWhere(path, n, key), n.IsScalar() ? "\"" + n.Scalar() + "\"" : "a mapping", "expected a list",
                      "a list with one entry per dimension, e.g. [ 8 ]");
  }
  return n;
}

}  // namespace

Result<AstraNetworkConfig> ReadAstraNetworkYaml(const std::string& path) {
  auto loaded = LoadYaml(path);
  if (!loaded.ok()) return loaded.status();
  YAML::Node root = loaded.value();
  if (!root.IsMap())
    return Status::Invalid(path + ": expected a YAML mapping with keys topology, npus_count, bandwidth, latency");
  if (root["dims"]) return ReadOrreryNetwork(path, root);
  ORRERY_RETURN_IF_ERROR(CheckKeys(path, root, {"topology", "npus_count", "bandwidth", "latency"}, ""));
  ORRERY_PARSE_OR_RETURN(const YAML::Node topo, AstraList(path, root, "topology"));
  ORRERY_PARSE_OR_RETURN(const YAML::Node npus, AstraList(path, root, "npus_count"));
  ORRERY_PARSE_OR_RETURN(const YAML::Node bw, AstraList(path, root, "bandwidth"));
  ORRERY_PARSE_OR_RETURN(const YAML::Node lat, AstraList(path, root, "latency"));
  if (topo.size() == 0)
    return Status::Invalid(path + ": 'topology' is empty; give at least one dimension, e.g. [ Ring ]");
  if (npus.size() != topo.size() || bw.size() != topo.size() || lat.size() != topo.size()) {
    return Status::Invalid(path + ": list lengths disagree: topology has " + std::to_string(topo.size()) +
                           " dimensions, npus_count " + std::to_string(npus.size()) + ", bandwidth " +
                           std::to_string(bw.size()) + ", latency " + std::to_string(lat.size()) +
                           "; give one entry per dimension in each");
  }
  const std::vector<std::string> blocks = {"Ring", "FullyConnected", "Switch"};
  AstraNetworkConfig cfg;
  int64_t total = 1;
  for (size_t i = 0; i < topo.size(); ++i) {
    AstraNetworkDim x;
    ORRERY_PARSE_OR_RETURN(x.block, YamlString(path, topo[i], Index("topology", i)));
    ORRERY_RETURN_IF_ERROR(CheckBlock(path, topo[i], Index("topology", i), x.block, blocks));
    ORRERY_PARSE_OR_RETURN(x.npus, DimNpus(path, npus[i], Index("npus_count", i), npus.size() == 1));
    ORRERY_PARSE_OR_RETURN(x.bandwidth_gbps, YamlDouble(path, bw[i], Index("bandwidth", i), kBandwidthGBps));
    ORRERY_PARSE_OR_RETURN(x.latency_ns, YamlDouble(path, lat[i], Index("latency", i), kLatencyNs));
    ORRERY_RETURN_IF_ERROR(AddToTotal(path, npus[i], Index("npus_count", i), x.npus, &total));
    cfg.dims.push_back(x);
  }
  return cfg;
}

}  // namespace orrery
