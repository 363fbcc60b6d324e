// Where the parallel axes fall on the network's dimensions. Ranks are numbered
// by the layout (innermost axis first) and by the network (dimension 0
// fastest), so an axis's groups occupy the dimensions its strides reach.
// `--place=tp:0,dp:1,pp:2` states the placement instead of the order: the
// axes become innermost-first by dimension, and each dimension must hold
// exactly the axes placed on it.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/status.h"
#include "gen/builder.h"
#include "network/topology.h"

namespace orrery::gen {

// One line per axis with size > 1: the dimensions its group of rank 0 spans,
// e.g. "tp -> dim0 Ring (all 8 NPUs)" or "dp -> dim1 Switch (16 of 128 NPUs, stride 8)".
std::vector<std::string> DescribePlacement(const Layout& layout, const std::vector<Dim>& dims);

// The network dimensions the group of rank 0 over `set` spans: bit k is set
// when two of its ranks differ in their coordinate on dimension k (at most 32
// dimensions). `sizes` in axis order, `order` innermost first, as for Layout.
// In closed form when every boundary of the axes (their strides) and of the
// dimensions (their NPU products) divides the next larger one, as with
// power-of-two sizes: O(axes + dimensions), whatever the group's size (the
// strategy search calls it for every candidate it ranks). Otherwise it walks
// the group's ranks, without allocating.
uint32_t SpannedDims(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order, AxisSet set,
                     const std::vector<Dim>& dims);
// SpannedDims when the boundaries form that chain of divisors, else false.
// Then every rank is a mixed-radix number whose digits each lie in one
// axis's range and one dimension's, so every group over `set` (not only rank
// 0's) is the product, over the spanned dimensions, of a set of coordinates
// in each: two ranks of a group that are neighbours in rank order (and the
// last and the first) differ in the lowest spanned dimension.
bool SpannedDimsIfChained(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                          AxisSet set, const std::vector<Dim>& dims, uint32_t* spanned);

// The group over `set` on each dimension, when the boundaries chain: how many
// coordinates its members take there (`count`, 1 where it does not vary), and
// `gaps`, the dimensions where those are not an arithmetic progression (the
// group's free digits there are not consecutive: tp 2 · cp 2 · dp 2 on one
// dimension of 8, the group over {tp, dp} takes 0, 1, 4, 5).
struct GroupDims {
  uint32_t spanned = 0;
  uint32_t gaps = 0;
  std::array<int64_t, 32> count{};
};
bool GroupDimsIfChained(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                        AxisSet set, const std::vector<Dim>& dims, GroupDims* out);
// Whether the hierarchical model runs such a group's collectives one phase
// per dimension (system/comm_group.h, PhasesPerDimension): a grid over several
// dimensions whose partial ones are a Switch or FullyConnected, or a group of
// whole dimensions.
bool RunsPerDimension(const GroupDims& g, const std::vector<Dim>& dims);
// Both at once: true when the boundaries chain and the group runs per
// dimension (`out` then holds its counts).
bool RunsPerDimensionIfChained(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                               AxisSet set, const std::vector<Dim>& dims, GroupDims* out);

// The rank order (innermost first) that puts each axis on the dimension(s)
// `spec` names: "axis:D" or "axis:D-E" (an axis alone on dimensions D..E),
// comma-separated; every axis of size > 1 must appear. `sizes` in axis order
// tp, cp, ep, dp, pp. An error names the dimension, its NPUs and the axes'
// product when they do not fill it exactly.
Result<std::array<Axis, kNumAxes>> OrderFromPlacement(const std::string& spec,
                                                      const std::array<int64_t, kNumAxes>& sizes,
                                                      const std::vector<Dim>& dims);

}  // namespace orrery::gen
