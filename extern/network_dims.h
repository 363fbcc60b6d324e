// The network as Orrery models it (network/topology.h Dim per dimension),
// read from ASTRA-sim's or Orrery's network YAML or the topology notation.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "network/topology.h"

namespace orrery {

// The network's dimensions from ASTRA-sim's or Orrery's network YAML, or a
// topology notation string ("Ring(8,50GB/s,500ns)_Switch(4,25GB/s,1us)").
Result<std::vector<Dim>> ReadNetworkDims(const std::string& path_or_notation);

}  // namespace orrery
