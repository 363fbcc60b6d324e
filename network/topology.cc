#include "network/topology.h"

#include <cstdlib>

#include "core/tick.h"
#include "core/units.h"

namespace orrery {

const char* BlockName(Block b) {
  switch (b) {
    case Block::kRing: return "Ring";
    case Block::kFullyConnected: return "FullyConnected";
    case Block::kSwitch: return "Switch";
    case Block::kRingUni: return "RingUni";
    case Block::kMesh: return "Mesh";
  }
  return "?";
}

bool BlockFromName(const std::string& name, Block* out) {
  static const Block blocks[] = {Block::kRing, Block::kFullyConnected, Block::kSwitch, Block::kRingUni, Block::kMesh};
  for (Block b : blocks) {
    if (name == BlockName(b)) {
      *out = b;
      return true;
    }
  }
  return false;
}

Topology::Topology(std::vector<Dim> dims) : dims_(std::move(dims)) {
  for (const Dim& d : dims_) {
    strides_.push_back(npus_);
    npus_ *= d.npus;
    bytes_per_ns_.push_back(GiBpsToBytesPerNs(d.bandwidth_gbps) * d.links_per_npu);
  }
}

}  // namespace orrery
