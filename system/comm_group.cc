#include "system/comm_group.h"

#include <algorithm>

#include "network/topology.h"

namespace orrery {

GroupGrid GridOf(const Topology& t, const std::vector<int>& ranks) {
  GroupGrid g;
  const int dims = t.num_dims();
  g.lo.assign(dims, 0);
  g.step.assign(dims, 1);
  g.n.assign(dims, 1);
  if (ranks.empty()) return g;
  if (ranks.front() < 0 || ranks.back() >= t.npus()) return g;  // the readers refuse such ranks first
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i] <= ranks[i - 1]) return g;
  }
  size_t product = 1;
  bool progressions = true;
  std::vector<char> seen;
  for (int d = 0; d < dims; ++d) {
    const int npus = t.dims()[d].npus;
    seen.assign(static_cast<size_t>(npus), 0);
    int lo = npus, hi = -1, count = 0;
    for (int r : ranks) {
      const int c = t.Coord(r, d);
      if (!seen[c]) seen[c] = 1, ++count;
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
    g.lo[d] = lo;
    g.n[d] = count;
    if (count > 1) {
      ++g.varying;
      // count distinct values in [lo, hi] on a progression fill it exactly.
      const int span = hi - lo;
      if (span % (count - 1) != 0) {
        progressions = false;
      } else {
        g.step[d] = span / (count - 1);
        for (int c = lo; c <= hi && progressions; c += g.step[d]) progressions = seen[c] != 0;
      }
    }
    product *= static_cast<size_t>(count);
  }
  g.grid = progressions && product == ranks.size();
  if (g.grid) {
    g.aligned = true;
    for (int d = 0; d < dims; ++d) g.aligned = g.aligned && (g.n[d] == 1 || g.n[d] == t.dims()[d].npus);
  }
  return g;
}

bool PhasesPerDimension(const Topology& t, const GroupGrid& g) {
  if (g.aligned) return true;
  if (!g.grid || g.varying < 2) return false;
  for (int d = 0; d < t.num_dims(); ++d) {
    const Block b = t.dims()[d].block;
    if (g.n[d] > 1 && g.n[d] < t.dims()[d].npus && b != Block::kSwitch && b != Block::kFullyConnected) return false;
  }
  return true;
}

}  // namespace orrery
