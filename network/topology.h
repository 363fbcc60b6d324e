// The physical network: a list of dimensions, each a building block with its
// own size, link bandwidth and latency. NPU ids are mixed radix, dim 0 fastest.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

// Ring: bidirectional ring; RingUni: one direction only; Mesh: a line (no
// wrap-around); FullyConnected: a link between every pair; Switch: one switch
// that every NPU of the group connects to.
enum class Block { kRing, kFullyConnected, kSwitch, kRingUni, kMesh };
const char* BlockName(Block b);
// Accepts the names above (case-sensitive, as in ASTRA-sim's YAML); false if unknown.
bool BlockFromName(const std::string& name, Block* out);

struct Dim {
  Block block = Block::kRing;
  int npus = 0;
  double bandwidth_gbps = 0;  // per link per direction; 1 GB = 2^30 bytes
  double latency_ns = 0;      // per link
  int links_per_npu = 1;      // parallel links per NPU and direction: multiplies the bandwidth
};

class Topology {
 public:
  explicit Topology(std::vector<Dim> dims);
  const std::vector<Dim>& dims() const { return dims_; }
  int num_dims() const { return static_cast<int>(dims_.size()); }
  int npus() const { return npus_; }
  // Size of all dimensions below `dim` (the id stride of that dimension).
  int stride(int dim) const { return strides_[dim]; }
  int Coord(int npu, int dim) const { return (npu / strides_[dim]) % dims_[dim].npus; }
  int WithCoord(int npu, int dim, int coord) const { return npu + (coord - Coord(npu, dim)) * strides_[dim]; }
  // Hops a message crosses inside one dimension between two coordinates
  // (inline: the analytical backend asks for every message).
  int Hops(int dim, int a, int b) const {
    if (a == b) return 0;
    const int n = dims_[dim].npus;
    switch (dims_[dim].block) {
      case Block::kRing: {
        const int d = a > b ? a - b : b - a;
        return d < n - d ? d : n - d;
      }
      case Block::kFullyConnected: return 1;
      case Block::kSwitch: return 2;
      case Block::kRingUni: return (b - a + n) % n;
      case Block::kMesh: return a > b ? a - b : b - a;
    }
    return 0;
  }
  double BytesPerNs(int dim) const { return bytes_per_ns_[dim]; }

 private:
  std::vector<Dim> dims_;
  std::vector<int> strides_;
  std::vector<double> bytes_per_ns_;
  int npus_ = 1;
};

}  // namespace orrery
