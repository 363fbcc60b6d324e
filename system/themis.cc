#include "system/themis.h"

#include <cstddef>

namespace orrery {

std::vector<int> ThemisOrder(const std::vector<ThemisDim>& dims, const std::vector<int>& active, double chunk_bytes,
                             std::vector<double>* load) {
  std::vector<int> cand = active;
  std::vector<int> order;
  double s = chunk_bytes;
  while (!cand.empty()) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < cand.size(); ++k) {
      if ((*load)[cand[k]] < (*load)[cand[best]]) best = k;  // ties keep the lower dimension
    }
    const int d = cand[best];
    cand.erase(cand.begin() + static_cast<long>(best));
    order.push_back(d);
    const double p = dims[d].npus;
    (*load)[d] += 2 * (p - 1) / p * s / dims[d].bytes_per_ns;
    s /= p;
  }
  return order;
}

}  // namespace orrery
