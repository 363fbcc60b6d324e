// Themis-style greedy inter-dimension scheduling: each chunk visits the
// dimensions in order of their accumulated load, least loaded first (the first
// phase carries the most data). Every choice adds the chunk's traffic on that
// dimension, 2(p-1)/p of the data entering it (reduce-scatter there and
// all-gather back), divided by the dimension's bandwidth.
#pragma once
#include <vector>

namespace orrery {

struct ThemisDim {
  int npus;
  double bytes_per_ns;
};

// Returns the visiting order for one chunk and updates `load` (one entry per dim).
std::vector<int> ThemisOrder(const std::vector<ThemisDim>& dims, const std::vector<int>& active, double chunk_bytes,
                             std::vector<double>* load);

}  // namespace orrery
