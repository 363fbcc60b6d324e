// What the system layer needs to know, in its own terms (the ASTRA-sim system
// JSON is mapped onto this by the run wiring).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/algorithm_kind.h"
#include "system/collective_plugin.h"

namespace orrery {

// AlgoKind and the built-in names: core/algorithm_kind.h. The plugin-facing
// types (ComType, CustomGraph, CollectiveRegistry): system/collective_plugin.h.

struct AlgoSpec {
  AlgoKind kind = AlgoKind::kRing;
  bool one = false;  // one* variants: one logical ring over all NPUs
  int window = -1;   // direct<N>
  std::string name = "ring";
  std::shared_ptr<const std::vector<CustomGraph>> custom;  // kCustom: one graph per rank
  std::shared_ptr<const CustomGraph> graph;                // kCustom built for one rank (rooted collectives)
  const CollectiveRegistry::Entry* plugin = nullptr;       // kPlugin
};

struct SystemOptions {
  bool lifo = true;
  uint64_t endpoint_delay_ns = 10;
  int active_chunks_per_dimension = 1;
  int preferred_dataset_splits = 1;
  bool local_bw_aware = false;
  bool themis = false;                // inter-dimension-scheduling: themis (else ascending)
  bool smallest_first = false;        // intra-dimension-scheduling: SmallestFirst (else FIFO)
  double local_mem_bw = 0;            // bytes per ns for the reduction cost (0: no cost)
  double in_switch_reduction_bw = 0;  // bytes per ns a reduction-capable switch combines (inSwitch algorithm)
  // group-collective-model (docs/parity.md, "Communicator groups"): false,
  // ASTRA-sim's: a collective on a group smaller than the network is one flat
  // ring over its ranks (ring forced where a list names several algorithms);
  // true, Orrery's hierarchical: a group of whole dimensions runs their
  // per-dimension algorithms, and so does a grid over several dimensions
  // (over its members along each; PhasesPerDimension in comm_group.h); any
  // other group a flat ring.
  bool hierarchical_groups = false;
  // Per collective type, one algorithm per dimension.
  std::vector<AlgoSpec> all_reduce, all_gather, reduce_scatter, all_to_all;
  const std::vector<AlgoSpec>& ImplFor(ComType t) const {
    switch (t) {
      case ComType::kAllReduce: return all_reduce;
      case ComType::kAllGather: return all_gather;
      case ComType::kReduceScatter: return reduce_scatter;
      case ComType::kAllToAll: return all_to_all;
    }
    return all_reduce;
  }
};

}  // namespace orrery
