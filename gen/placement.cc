#include "gen/placement.h"

#include <algorithm>
#include <bit>
#include <sstream>

#include "core/limits.h"
#include "core/parse.h"

namespace orrery::gen {

namespace {

std::string DimLabel(const std::vector<Dim>& dims, size_t k) {
  return "dim" + std::to_string(k) + " " + BlockName(dims[k].block);
}

}  // namespace

namespace {

// SpannedDims in closed form, or false when the boundaries do not form a
// chain of divisors. With boundaries 1 = v_0 | v_1 | ... | v_m = N every rank
// is a mixed-radix number of digits in [0, v_{i+1}/v_i); each such digit lies
// inside one axis's range of ranks and one dimension's. The group's ranks are
// those whose digits outside its axes are 0, the others free: a dimension is
// spanned when a digit of its range is free.
bool SpannedDimsClosedForm(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                           AxisSet set, const std::vector<Dim>& dims, uint32_t* spanned, GroupDims* grid = nullptr) {
  struct Range {
    int64_t lo, hi;  // [lo, hi) in ranks: a stride and the next one
    int id;          // axis index, or 100 + dimension
  };
  std::array<Range, kNumAxes + 33> ranges{};
  size_t n = 0;
  int64_t next = 1;
  for (Axis a : order) {
    const int64_t size = sizes[static_cast<int>(a)];
    if (size < 1 || next > (int64_t{1} << 40) / size) return false;
    if (size > 1) ranges[n++] = {next, next * size, static_cast<int>(a)};
    next *= size;
  }
  const int64_t npus = next;
  next = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k >= 32 || dims[k].npus < 1 || next > npus / dims[k].npus) return false;
    if (dims[k].npus > 1) ranges[n++] = {next, next * dims[k].npus, 100 + static_cast<int>(k)};
    next *= dims[k].npus;
  }
  if (next != npus) return false;
  std::array<int64_t, kNumAxes + 34> cuts{};
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) cuts[c++] = ranges[i].lo;
  cuts[c++] = npus;
  std::sort(cuts.begin(), cuts.begin() + c);
  for (size_t i = 1; i < c; ++i) {
    if (cuts[i] % cuts[i - 1] != 0) return false;  // not a chain: the digits carry into each other
  }
  *spanned = 0;
  // Per dimension: 0 no free digit yet, 1 in a run of free digits, 2 after one.
  std::array<uint8_t, 32> run{};
  if (grid) {
    *grid = GroupDims{};
    grid->count.fill(1);
  }
  for (size_t i = 0; i + 1 < c; ++i) {
    const int64_t lo = cuts[i], hi = cuts[i + 1];
    if (lo == hi) continue;
    bool free = false;
    int dim = -1;
    for (size_t r = 0; r < n; ++r) {
      if (ranges[r].lo > lo || hi > ranges[r].hi) continue;
      if (ranges[r].id >= 100) dim = ranges[r].id - 100;
      if (ranges[r].id < 100 && (set & Axes(static_cast<Axis>(ranges[r].id)))) free = true;
    }
    if (free && dim >= 0) *spanned |= 1u << dim;
    if (grid && dim >= 0) {
      if (free) {
        if (run[dim] == 2) grid->gaps |= 1u << dim;
        run[dim] = 1;
        grid->count[dim] *= hi / lo;
      } else if (run[dim] == 1) {
        run[dim] = 2;
      }
    }
  }
  if (grid) grid->spanned = *spanned;
  return true;
}

}  // namespace

bool SpannedDimsIfChained(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                          AxisSet set, const std::vector<Dim>& dims, uint32_t* spanned) {
  return SpannedDimsClosedForm(sizes, order, set, dims, spanned);
}

bool GroupDimsIfChained(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                        AxisSet set, const std::vector<Dim>& dims, GroupDims* out) {
  uint32_t spanned = 0;
  return SpannedDimsClosedForm(sizes, order, set, dims, &spanned, out);
}

bool RunsPerDimension(const GroupDims& g, const std::vector<Dim>& dims) {
  if (g.gaps != 0) return false;
  bool whole = true, uniform = true;
  for (size_t k = 0; k < dims.size() && k < 32; ++k) {
    if (!((g.spanned >> k) & 1u) || g.count[k] == dims[k].npus) continue;
    whole = false;
    uniform = uniform && (dims[k].block == Block::kSwitch || dims[k].block == Block::kFullyConnected);
  }
  return whole || (std::popcount(g.spanned) >= 2 && uniform);
}

bool RunsPerDimensionIfChained(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                               AxisSet set, const std::vector<Dim>& dims, GroupDims* out) {
  return GroupDimsIfChained(sizes, order, set, dims, out) && RunsPerDimension(*out, dims);
}

uint32_t SpannedDims(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order, AxisSet set,
                     const std::vector<Dim>& dims) {
  if (uint32_t spanned = 0; SpannedDimsClosedForm(sizes, order, set, dims, &spanned)) return spanned;
  std::array<int64_t, kNumAxes> stride{}, coord{};
  int64_t next = 1;
  for (Axis a : order) {
    stride[static_cast<int>(a)] = next;
    next *= sizes[static_cast<int>(a)];
  }
  uint32_t spanned = 0;
  // Odometer over the coordinates of the axes in `set` (rank 0: all others 0).
  while (true) {
    int64_t rank = 0;
    for (int a = 0; a < kNumAxes; ++a) rank += coord[a] * stride[a];
    for (size_t k = 0; k < dims.size() && k < 32; ++k) {
      if (rank % dims[k].npus != 0) spanned |= 1u << k;
      rank /= dims[k].npus;
    }
    int a = 0;
    for (; a < kNumAxes; ++a) {
      if (!(set & Axes(static_cast<Axis>(a))) || sizes[a] <= 1) continue;
      if (++coord[a] < sizes[a]) break;
      coord[a] = 0;
    }
    if (a == kNumAxes) return spanned;
  }
}

std::vector<std::string> DescribePlacement(const Layout& layout, const std::vector<Dim>& dims) {
  std::vector<std::string> out;
  int64_t network_npus = 1;
  for (const Dim& d : dims) network_npus *= d.npus;
  if (network_npus != layout.npus()) {
    out.push_back("(the network has " + std::to_string(network_npus) + " NPUs, the strategy " +
                  std::to_string(layout.npus()) + ": no placement)");
    return out;
  }
  for (int a = 0; a < kNumAxes; ++a) {
    const Axis axis = static_cast<Axis>(a);
    if (layout.size(axis) <= 1) continue;
    const std::vector<int> group = layout.GroupRanks(0, axis);
    std::array<int64_t, kNumAxes> sizes{};
    std::array<Axis, kNumAxes> order{};
    for (int b = 0; b < kNumAxes; ++b) sizes[b] = layout.size(static_cast<Axis>(b));
    for (int b = 0; b < kNumAxes; ++b) order[b] = layout.order()[b];
    const uint32_t mask = SpannedDims(sizes, order, Axes(axis), dims);
    std::vector<size_t> spanned;
    int64_t covered = 1;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (mask & (1u << k)) {
        spanned.push_back(k);
        covered *= dims[k].npus;
      }
    }
    std::ostringstream line;
    line << AxisName(axis) << " -> ";
    for (size_t i = 0; i < spanned.size(); ++i) line << (i ? " + " : "") << DimLabel(dims, spanned[i]);
    if (static_cast<int64_t>(group.size()) == covered) {
      line << " (all " << covered << " NPUs" << (spanned.size() > 1 ? " of them" : "") << ")";
    } else {
      line << " (" << group.size() << " of " << covered << " NPUs, stride " << group[1] - group[0] << ")";
    }
    out.push_back(line.str());
  }
  return out;
}

namespace {

// An axis placed alone or with others on dimension `first`, or alone on first..last.
struct Placed {
  Axis axis;
  int first, last;
};

// The parts of a --place error message.
struct PlaceWhere {
  const std::string& spec;
  Where where;
  std::string allowed;
};

// One "axis:D" or "axis:D-E" item; `placed`: the items before it.
Result<Placed> ParsePlacedItem(const std::string& item, const std::vector<Placed>& placed, const std::vector<Dim>& dims,
                               const PlaceWhere& w) {
  const size_t colon = item.find(':');
  if (colon == std::string::npos) return ValueError(w.where, w.spec, "'" + item + "' has no ':'", w.allowed);
  const std::string name = item.substr(0, colon), range = item.substr(colon + 1);
  int axis = -1;
  for (int a = 0; a < kNumAxes; ++a) {
    if (name == AxisName(static_cast<Axis>(a))) axis = a;
  }
  if (axis < 0)
    return ValueError(w.where, w.spec, "unknown axis '" + name + "'", "axes tp, cp, ep, dp, pp; " + w.allowed);
  for (const Placed& p : placed) {
    if (static_cast<int>(p.axis) == axis)
      return ValueError(w.where, w.spec, "axis '" + name + "' placed twice", w.allowed);
  }
  const size_t dash = range.find('-');
  const int max_dim = static_cast<int>(dims.size()) - 1;
  int64_t first = 0, last = 0;
  const Where at{"", 0, "--place " + name};
  ORRERY_PARSE_OR_RETURN(first, ParseInt(range.substr(0, dash), at, 0, max_dim));
  last = first;
  if (dash != std::string::npos) {
    ORRERY_PARSE_OR_RETURN(last, ParseInt(range.substr(dash + 1), at, first, max_dim));
  }
  return Placed{static_cast<Axis>(axis), static_cast<int>(first), static_cast<int>(last)};
}

bool IsPlaced(const std::vector<Placed>& placed, int axis) {
  bool found = false;
  for (const Placed& p : placed) found = found || static_cast<int>(p.axis) == axis;
  return found;
}

Status CheckEveryAxisPlaced(const std::vector<Placed>& placed, const std::array<int64_t, kNumAxes>& sizes,
                            const PlaceWhere& w) {
  for (int a = 0; a < kNumAxes; ++a) {
    if (sizes[a] <= 1 || IsPlaced(placed, a)) continue;
    return ValueError(w.where, w.spec,
                      std::string("axis ") + AxisName(static_cast<Axis>(a)) + " (size " + std::to_string(sizes[a]) +
                          ") has no dimension",
                      "every axis with size > 1 placed; " + w.allowed);
  }
  return Status::Ok();
}

// Dimension k holds exactly its axes: their sizes multiply to its NPUs, or one
// axis alone spans it (and the dimensions after it) exactly.
Status CheckDimensionFilled(size_t k, const std::vector<Placed>& placed, const std::array<int64_t, kNumAxes>& sizes,
                            const std::vector<Dim>& dims, const PlaceWhere& w) {
  int64_t product = 1;
  std::string names;
  bool spanning = false;
  for (const Placed& p : placed) {
    if (static_cast<int>(k) < p.first || static_cast<int>(k) > p.last) continue;
    names += std::string(names.empty() ? "" : "·") + AxisName(p.axis);
    if (p.first != p.last) {
      spanning = true;
      if (p.first != static_cast<int>(k)) continue;
      int64_t span = 1;
      for (int j = p.first; j <= p.last; ++j) span *= dims[j].npus;
      if (sizes[static_cast<int>(p.axis)] != span) {
        return ValueError(w.where, w.spec,
                          std::string("axis ") + AxisName(p.axis) + " has size " +
                              std::to_string(sizes[static_cast<int>(p.axis)]) + " but dimensions " +
                              std::to_string(p.first) + ".." + std::to_string(p.last) + " hold " +
                              std::to_string(span) + " NPUs",
                          "an axis spanning dimensions alone fills them exactly");
      }
      continue;
    }
    // Past the dimension's NPUs (at most kMaxNpus) it cannot fill it: stop there, nothing overflows.
    if (!MulWithin(product, sizes[static_cast<int>(p.axis)], kMaxNpus, &product)) product = kMaxNpus + 1;
  }
  if (spanning) {
    if (names.find("·") == std::string::npos) return Status::Ok();
    return ValueError(w.where, w.spec,
                      DimLabel(dims, k) + " holds " + names + ", one of them spanning several dimensions",
                      "an axis spanning dimensions alone on them");
  }
  if (product == dims[k].npus) return Status::Ok();
  return ValueError(w.where, w.spec,
                    DimLabel(dims, k) + " has " + std::to_string(dims[k].npus) + " NPUs but the axes placed on it (" +
                        (names.empty() ? std::string("none") : names) + ") multiply to " +
                        (product > kMaxNpus ? "more than " + std::to_string(kMaxNpus) : std::to_string(product)),
                    "axes whose sizes multiply to each dimension's NPU count");
}

// Innermost first: by dimension, then as listed; size-1 axes last.
std::array<Axis, kNumAxes> OrderOf(const std::vector<Placed>& placed) {
  std::vector<Placed> sorted = placed;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Placed& x, const Placed& y) { return x.first < y.first; });
  std::array<Axis, kNumAxes> order{};
  int n = 0;
  for (const Placed& p : sorted) order[n++] = p.axis;
  for (int a = 0; a < kNumAxes; ++a) {
    if (!IsPlaced(placed, a)) order[n++] = static_cast<Axis>(a);
  }
  return order;
}

}  // namespace

Result<std::array<Axis, kNumAxes>> OrderFromPlacement(const std::string& spec,
                                                      const std::array<int64_t, kNumAxes>& sizes,
                                                      const std::vector<Dim>& dims) {
  const PlaceWhere w{spec, Where{"", 0, "--place"},
                     "axis:DIM or axis:FIRST-LAST, comma-separated, e.g. tp:0,dp:1,pp:2 (dimensions 0.." +
                         std::to_string(static_cast<int>(dims.size()) - 1) + ")"};
  std::vector<Placed> placed;
  std::stringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    Placed p{};
    ORRERY_PARSE_OR_RETURN(p, ParsePlacedItem(item, placed, dims, w));
    placed.push_back(p);
  }
  ORRERY_RETURN_IF_ERROR(CheckEveryAxisPlaced(placed, sizes, w));
  for (size_t k = 0; k < dims.size(); ++k) ORRERY_RETURN_IF_ERROR(CheckDimensionFilled(k, placed, sizes, dims, w));
  return OrderOf(placed);
}

}  // namespace orrery::gen
