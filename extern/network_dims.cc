#include "extern/network_dims.h"

#include "extern/astra_config.h"
#include "extern/json_util.h"
#include "network/notation.h"

namespace orrery {

Result<std::vector<Dim>> ReadNetworkDims(const std::string& path) {
  // A YAML file (ASTRA-sim's or Orrery's), or the compact notation.
  if (path.find('(') != std::string::npos && !ReadTextFile(path).ok()) return ParseTopologyNotation(path);
  auto net = ReadAstraNetworkYaml(path);
  if (!net.ok()) return net.status();
  std::vector<Dim> dims;
  for (const auto& d : net->dims) {
    Dim x;
    if (!BlockFromName(d.block, &x.block)) return Status::Invalid(path + ": unknown block " + d.block);
    x.npus = d.npus;
    x.bandwidth_gbps = d.bandwidth_gbps;
    x.latency_ns = d.latency_ns;
    x.links_per_npu = d.links_per_npu;
    dims.push_back(x);
  }
  return dims;
}

}  // namespace orrery
