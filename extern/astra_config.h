// Readers for ASTRA-sim's configuration files, validated strictly: unknown
// keys, wrong types and impossible values are errors that name the file, the
// key and what is allowed.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "core/algorithm_kind.h"
#include "core/remote_memory_kind.h"
#include "core/status.h"

namespace orrery {

// --- network YAML ----------------------------------------------------------
struct AstraNetworkDim {
  std::string block;  // "Ring", "FullyConnected" or "Switch"
  int npus = 0;
  double bandwidth_gbps = 0;  // GB/s per link per direction (1 GB = 2^30 B)
  double latency_ns = 0;
  int links_per_npu = 1;
};
struct AstraNetworkConfig {
  std::vector<AstraNetworkDim> dims;
  int64_t TotalNpus() const {  // at most kMaxNpus: the readers check the product
    int64_t n = 1;
    for (const auto& d : dims) n *= d.npus;
    return n;
  }
};
// Reads ASTRA-sim's network YAML (topology/npus_count/bandwidth/latency lists)
// or Orrery's own (a `dims:` list of {block, npus, bandwidth_gbps, latency_ns,
// links_per_npu}, which also accepts the RingUni and Mesh blocks).
Result<AstraNetworkConfig> ReadAstraNetworkYaml(const std::string& path);

// --- system JSON -------------------------------------------------------------
// One entry of a *-implementation list; the algorithm names are those of
// core/algorithm_kind.h.
struct CollectiveImplSpec {
  AlgoKind kind = AlgoKind::kRing;
  bool one = false;           // one* variants
  int window = -1;            // direct<N>: at most N messages in flight
  std::string custom_prefix;  // custom: per-rank Chakra traces of the algorithm
  std::string name;           // as written
};
struct AstraSystemConfig {
  std::string path;
  bool lifo = true;  // scheduling-policy LIFO (default) or FIFO
  uint64_t endpoint_delay_ns = 10;
  bool endpoint_delay_given = false;  // ASTRA-sim scales only a given delay by --injection-scale
  int active_chunks_per_dimension = 1;
  int preferred_dataset_splits = 1;
  std::vector<CollectiveImplSpec> all_reduce, all_gather, reduce_scatter, all_to_all;
  bool local_bw_aware = false;        // collective-optimization
  double local_mem_bw = 0;            // bytes per ns in the reduction cost, GB/s in the roofline
  double in_switch_reduction_bw = 0;  // Orrery extension: "in-switch-reduction-bw", bytes per ns
  bool roofline_enabled = false;
  double peak_perf_tflops = 0;
  // Orrery extension "collective-sm-fraction": the share of the GPU's SMs a
  // collective in flight holds; a roofline kernel issued beside one runs at
  // (1 - share) of its compute roof. 0 (default): collectives take no SMs.
  double collective_sm_fraction = 0;
  std::string device;  // Orrery extension: "device", the accelerator preset (gen/device.h); "" none
  // Orrery extension "group-collective-model" (docs/parity.md, "Communicator
  // groups"): "astra-sim" (default) or "hierarchical".
  std::string group_collective_model = "astra-sim";
  std::string intra_dimension_scheduling = "FIFO";
  std::string inter_dimension_scheduling = "baseline";
};
// `plugin_algorithms`: names of collective algorithms registered by plugins,
// accepted in the *-implementation lists.
Result<AstraSystemConfig> ReadAstraSystemJson(const std::string& path,
                                              const std::vector<std::string>& plugin_algorithms = {});
// The same from a parsed document (`path` names it in messages): a sweep
// replaces keys of a base system JSON without writing files.
Result<AstraSystemConfig> ParseAstraSystemJson(const nlohmann::json& document, const std::string& path,
                                               const std::vector<std::string>& plugin_algorithms = {});
// The keys a system JSON may hold.
const std::vector<std::string>& AstraSystemKeys();

// --- remote memory JSON ------------------------------------------------------
struct AstraRemoteMemoryConfig {
  RemoteMemoryKind kind = RemoteMemoryKind::kNone;
  uint64_t latency_ns = 0;
  double bandwidth_bytes_per_ns = 0;  // "GB/s", 1 GB = 10^9 B here
  int num_nodes = 0;
  int npus_per_node = 0;
};
Result<AstraRemoteMemoryConfig> ReadAstraRemoteMemoryJson(const std::string& path);

// --- Orrery's memory configuration: a flat YAML mapping of settings, e.g.
//   backend: pool
//   latency_ns: 500
//   bandwidth_gbps: 50
//   ports: 2
//   sharing: fair
// The backend named by `backend` validates the rest. Every value must be a
// single scalar; a key given twice is an error. `lines` holds each key's line.
struct FlatYaml {
  std::string path;
  std::map<std::string, std::string> values;
  std::map<std::string, int> lines;  // 1-based
};
Result<FlatYaml> ReadFlatYaml(const std::string& path);

// --- communicator groups JSON: {"<id>": [ranks...], ...} -----------------------
Result<std::map<std::string, std::vector<int>>> ReadCommGroupJson(const std::string& path, int64_t npus);

}  // namespace orrery
