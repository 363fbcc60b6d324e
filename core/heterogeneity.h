// A heterogeneous cluster: NPUs that compute slower or faster than the system
// file says, and NPU links slower or faster than their network dimension. Read
// from a YAML file (`--heterogeneity`, extern/heterogeneity.h; docs/formats.md,
// "Heterogeneous clusters"); an empty one changes nothing.
//
//   compute speed s of rank r:   every COMP node of r takes its time / s
//   link factor f of (rank, d):  r's links in dimension d carry f x the
//                                dimension's bandwidth; a message leg on d
//                                between X and Y runs at the dimension's
//                                bandwidth x min(f(X, d), f(Y, d))
//
//     X ──────── Y        leg of a message in dimension d (dimension-order
//     f(X,d)   f(Y,d)     routing: X has the destination's coordinates below
//                         d and the source's from d up; Y differs from X in d)
//
// Lookups are binary searches over the listed entries only (O(log listed)),
// made only when the file lists something of that kind.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

struct Heterogeneity {
  std::string path;                                   // the file (for notes and messages)
  std::vector<std::pair<int, double>> compute_speed;  // (rank, speed), sorted by rank, each rank once
  std::vector<std::pair<uint64_t, double>> link;      // (LinkKey(rank, dim), factor), sorted, each once

  static uint64_t LinkKey(int rank, int dim) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(rank)) << 8) | static_cast<uint8_t>(dim);
  }
  bool empty() const { return compute_speed.empty() && link.empty(); }
  // 1 for a rank the file does not list.
  double ComputeSpeed(int rank) const { return Find(compute_speed, rank); }
  double LinkFactor(int rank, int dim) const { return Find(link, LinkKey(rank, dim)); }

 private:
  template <typename K>
  static double Find(const std::vector<std::pair<K, double>>& v, K key) {
    auto it = std::lower_bound(v.begin(), v.end(), key, [](const std::pair<K, double>& e, K k) { return e.first < k; });
    return it != v.end() && it->first == key ? it->second : 1.0;
  }
};

}  // namespace orrery
