// Filters of a sweep spec: `filters: ["gen.tp * gen.pp <= 16", "dim1.bandwidth_gbps >= dim0.bandwidth_gbps"]`.
// A point is run only when every filter holds for it.
//
// The language (one expression per filter, whitespace free):
//   or      := and  { ("or"  | "||") and }
//   and     := not  { ("and" | "&&") not }
//   not     := ("not" | "!") not | cmp
//   cmp     := sum [ ("==" | "!=" | "<" | "<=" | ">" | ">=") sum ]     (no chains: a < b < c is an error)
//   sum     := prod { ("+" | "-") prod }
//   prod    := unary { ("*" | "/") unary }
//   unary   := "-" unary | primary
//   primary := number | 'text' | "text" | true | false | name | "(" or ")"
// Values are numbers (doubles), strings or booleans; + - * / and < <= > >=
// take numbers, == and != any two values of one type, and/or/not booleans.
// A name is a dotted path the spec may assign (network.dim1.bandwidth_gbps,
// gen.tp, system.reduce-scatter-implementation, run.iterations), or any
// dot-separated tail of one that names exactly one path (tp, dim1.bandwidth_gbps).
// Its value is the point's, else the base's (the generate line's flags or the
// generator's defaults, the network's dimensions, the system JSON's keys, the
// run settings). A '-' joins
// two letters inside a name (microbatch-size); write subtraction with spaces.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "explore/sweep.h"

namespace orrery::sweep {

struct FilterText {
  std::string text;
  int line = 0;  // in the spec file
};

// The filters compiled once and evaluated point by point: a sweep runs its
// enumeration through them and keeps only the points they hold for, so the
// points filtered out are never stored. `axis_paths`: every path a point
// may assign. Errors as FilterPoints's.
class PointFilters {
 public:
  static Result<std::unique_ptr<PointFilters>> Compile(const std::string& file, const std::vector<FilterText>& filters,
                                                       const std::vector<std::string>& axis_paths,
                                                       std::map<std::string, Value> base,
                                                       const std::vector<std::string>& valid_paths);
  ~PointFilters();
  // Whether every filter holds at point `index` of the enumeration.
  Result<bool> Holds(const std::vector<Assignment>& point, uint64_t index);

 private:
  struct Impl;
  explicit PointFilters(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Keeps the points every filter holds for, returning their positions in
// `points` (in order). Errors (exit 2) name the spec file and line, the filter
// and, for a syntax error, the column and what was expected; an unknown name
// lists the closest names; a type error or division by zero names the first
// point it happens at. `base` holds the base's values by path.
Result<std::vector<uint64_t>> FilterPoints(const std::string& file, const std::vector<FilterText>& filters,
                                           const std::vector<std::vector<Assignment>>& points,
                                           const std::map<std::string, Value>& base,
                                           const std::vector<std::string>& valid_paths);

}  // namespace orrery::sweep
