#include "core/limits.h"

#include <cstdio>

namespace orrery {

int64_t ProductWithin(std::initializer_list<int64_t> factors, int64_t limit, size_t* broke) {
  int64_t product = 1;
  size_t i = 0;
  for (int64_t f : factors) {
    if (f < 0 || !MulWithin(product, f, limit, &product)) {
      if (broke) *broke = i;
      return -1;
    }
    ++i;
  }
  return product;
}

namespace {

// The product as a message shows it: exact within int64, else "about 1.2e+24".
std::string ShownProduct(const std::vector<Factor>& factors) {
  int64_t exact = 1;
  bool fits = true;
  long double approx = 1;
  for (const Factor& f : factors) {
    approx *= static_cast<long double>(f.value);
    fits = fits && f.value >= 0 && !__builtin_mul_overflow(exact, f.value, &exact);
  }
  if (fits) return std::to_string(exact);
  char buf[48];
  std::snprintf(buf, sizeof buf, "about %.2Lg", approx);
  return buf;
}

}  // namespace

Result<int64_t> CheckedProduct(const std::vector<Factor>& factors, int64_t limit, const Where& where,
                               const std::string& allowed) {
  int64_t product = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (factors[i].value >= 0 && MulWithin(product, factors[i].value, limit, &product)) continue;
    std::string names, values;
    for (const Factor& f : factors) {
      names += (names.empty() ? "" : "·") + f.name;
      values += (values.empty() ? "" : "·") + std::to_string(f.value);
    }
    Where at = where;
    if (at.key.empty()) at.key = names;
    if (at.line == 0) at.line = factors[i].line;
    const std::string what = factors[i].value < 0
                                 ? factors[i].name + " is negative"
                                 : "above " + std::to_string(limit) + " from " + factors[i].name + " on";
    return ValueError(at, (at.key == names ? "" : names + " = ") + values + " = " + ShownProduct(factors), what,
                      allowed);
  }
  return product;
}

}  // namespace orrery
