// The compact topology notation: dimensions joined by '_', innermost first:
//
//   Ring(8,200GB/s,50ns)_FullyConnected(4,100GB/s,500ns)_Switch(16,50GB/s,2us)
//
// Each dimension is Block(npus, bandwidth, latency[, links_per_npu]). Blocks:
// Ring, RingUni, Mesh, FullyConnected, Switch, and the two-dimensional
// Torus2D(AxB, ...) and Mesh2D(AxB, ...), which expand into two dimensions.
// Bandwidth units: GB/s (2^30 B/s, as in ASTRA-sim), Gb/s, MB/s, TB/s;
// latency units: ns, us, ms. A syntax error points at the offending character.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "network/topology.h"

namespace orrery {

Result<std::vector<Dim>> ParseTopologyNotation(const std::string& text);
std::string FormatTopologyNotation(const std::vector<Dim>& dims);

}  // namespace orrery
