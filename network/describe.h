// At-a-glance facts about a topology, and writers for its two file formats.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "network/topology.h"

namespace orrery {

struct DimFacts {
  int groups = 0;      // independent copies of this dimension
  uint64_t links = 0;  // physical links (a bidirectional link counts once)
  uint64_t switches = 0;
  int ports_per_npu = 0;      // NIC ports each NPU needs in this dimension
  double bisection_gbps = 0;  // one direction, one group
  double injection_gbps = 0;  // per NPU, one direction
};
DimFacts FactsOf(const Dim& d, int total_npus);

// Bandwidth-only estimate of a hierarchical all-reduce of `bytes` per NPU
// (reduce-scatter up the dimensions, all-reduce on the last, all-gather back),
// each phase at the bandwidth-optimal (p-1)/p volume: returns seconds.
double IdealAllReduceSeconds(const std::vector<Dim>& dims, double bytes);

std::string DescribeTopology(const std::vector<Dim>& dims, uint64_t allreduce_bytes);
// ASTRA-sim's network YAML; false when a block or links_per_npu has no ASTRA-sim equivalent.
bool WriteAstraSimYaml(const std::vector<Dim>& dims, std::string* out);
// Orrery's own network YAML (every block, links_per_npu, explicit units).
std::string WriteOrreryYaml(const std::vector<Dim>& dims);

}  // namespace orrery
