// Strategy search (`orrery search`, issue 12): every parallelism strategy of a
// transformer on N NPUs in a canonical order, a pre-filter that drops the ones
// that do not divide or do not fit (counting why), and the survivors ranked by
// the symbolic cost (search_cost.h). Formulas: docs/generator.md, "Strategy search".
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/units.h"
#include "explore/search_cost.h"
#include "gen/strategy.h"

namespace orrery::gen {

struct SearchSpace {
  int64_t npus = 0;
  int64_t global_batch = 0;                           // G
  std::vector<int64_t> microbatch_sizes{1, 2, 4, 8};  // b
  std::vector<int64_t> interleave_chunks{2, 4};       // V of interleaved:V
  uint64_t hbm_bytes = 80 * kBytesPerGB;
};

// Why a strategy was dropped: ValidateStrategy's rules in its order, then the
// memory check. kSurvives: kept.
enum class PruneReason : uint8_t {
  kSurvives = 0,
  kTpHeads,
  kTpKvHeads,
  kTpFfnVocab,
  kPpLayers,
  kEpExperts,
  kCpSeqLen,
  kSpTokens,
  kInterleavedLayers,
  kInterleavedMicrobatches,
  kGlobalBatch,
  kMemory,
};
inline constexpr int kNumPruneReasons = 12;
const char* PruneReasonText(PruneReason r);  // "tp does not divide heads", ...
using PruneCounts = std::array<uint64_t, kNumPruneReasons>;

// The axis sizes of every strategy shape, (tp, cp, ep, dp, pp) with product
// npus, in canonical order: tp, then cp, then ep, then pp ascending over the
// divisors (dp the rest); ep > 1 only for MoE models.
std::vector<std::array<int64_t, kNumAxes>> StrategyShapes(const ModelDesc& m, int64_t npus);
// Every distinct rank order of the axes with size > 1 (permutations in
// lexicographic order of axis index), the size-1 axes appended in axis order.
std::vector<std::array<Axis, kNumAxes>> RankOrders(const std::array<int64_t, kNumAxes>& sizes);

// Calls visit(strategy, index) for every strategy in canonical order, index
// 0, 1, ...: shape, microbatch size b, schedule (1f1b, gpipe, interleaved:V
// for pp > 1), SP off/on (on only with tp > 1), recompute none/selective/full,
// ZeRO 0..3 (1..3 only when the data-parallel group cp·ep·dp > 1), rank
// order. m = G/(b·dp·ep) rounded down (a remainder is the kGlobalBatch
// reason). Allocates only per shape. Returns the count.
template <typename Visit>
uint64_t ForEachStrategy(const ModelDesc& m, const SearchSpace& space, Visit&& visit) {
  uint64_t index = 0;
  Strategy s;
  s.npus = space.npus;
  s.global_batch = space.global_batch;
  for (const auto& shape : StrategyShapes(m, space.npus)) {
    s.tp = shape[0], s.cp = shape[1], s.ep = shape[2], s.dp = shape[3], s.pp = shape[4];
    const std::vector<std::array<Axis, kNumAxes>> orders = RankOrders(shape);
    const int max_zero = s.cp * s.ep * s.dp > 1 ? 3 : 0;
    for (int64_t b : space.microbatch_sizes) {
      s.microbatch_size = b;
      s.microbatches = space.global_batch / (b * s.dp * s.ep);
      const size_t schedules = 2 + (s.pp > 1 ? space.interleave_chunks.size() : 0);
      for (size_t k = 0; k < schedules; ++k) {
        s.schedule = k == 0 ? Schedule::k1F1B : k == 1 ? Schedule::kGpipe : Schedule::kInterleaved;
        s.chunks = k < 2 ? 1 : space.interleave_chunks[k - 2];
        for (int sp = 0; sp <= (s.tp > 1 ? 1 : 0); ++sp) {
          s.sp = sp == 1;
          for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
            s.recompute = r;
            for (int z = 0; z <= max_zero; ++z) {
              s.zero = z;
              for (const auto& order : orders) {
                s.order = order;
                visit(static_cast<const Strategy&>(s), index++);
              }
            }
          }
        }
      }
    }
  }
  return index;
}

// The pre-filter: ValidateStrategy's divisibility rules (same rules, same
// order) and the closed-form memory (the largest StageMemory total over the
// stages) against HBM, with the model's per-layer parameters summed once up
// front, so a check allocates nothing. Equal to ValidateStrategy +
// CheckCapacity on every strategy ForEachStrategy gives (tested).
class PreFilter {
 public:
  PreFilter(const ModelDesc& m, uint64_t hbm_bytes);
  PruneReason Check(const Strategy& s) const;
  // max over stages k of StageMemory(m, s, k).total_bytes (no offload).
  uint64_t PeakBytes(const Strategy& s) const;

 private:
  PruneReason Rules(const Strategy& s) const;
  const ModelDesc& m_;
  uint64_t hbm_bytes_;
  std::vector<uint64_t> dense_prefix_, expert_prefix_;  // parameters of layers [0, j)
};

// Twins: strategies whose generated graphs run identically on the network,
// so one simulation stands for all. Two strategies that differ only in
//  - ZeRO-1 against ZeRO-2: the generator emits the same graph for both
//    (reduce-scatter + all-gather of the gradients; OptimizerBytes is the
//    same); they differ only in the memory the pre-filter checks;
//  - the rank order, when every axis's group falls on the same network
//    dimensions with the same number of ranks in each: on a Switch dimension
//    which ports an axis takes does not matter (any permutation of a
//    Switch's NPUs is a symmetry of the network, and it keeps each group's
//    ranks in the same relative order); on a Ring its stride in the
//    dimension is part of the key. When the axes' and dimensions' boundaries
//    do not form a chain of divisors, or the network has more than
//    kMaxTwinDims dimensions, the order itself is the key (no order twins).
inline constexpr int kMaxTwinDims = 6;
struct TwinKey {
  int zero = 0;  // 2 counted as 1
  // Per axis and dimension: ranks in the dimension, and the stride in it (Ring) or 0.
  std::array<int64_t, kNumAxes * kMaxTwinDims * 2> placement{};
  friend bool operator==(const TwinKey&, const TwinKey&) = default;
};
TwinKey TwinKeyOf(const Strategy& s, const std::vector<Dim>& dims);

// One ranked strategy.
struct Candidate {
  Strategy strategy;
  uint64_t index = 0;  // canonical
  SymbolicCost cost;
  uint64_t twins = 0;  // other survivors with this one's TwinKey (it has the lowest index of them)
};

struct SearchResult {
  uint64_t enumerated = 0;
  PruneCounts pruned{};          // [kSurvives] = survivors
  uint64_t distinct = 0;         // survivors once twins are merged
  std::vector<Candidate> top;    // by symbolic total, ties by index (RankOptions::by_lower_bound: by lower bound)
  double prefilter_seconds = 0;  // enumeration + pre-filter + cost, wall clock
  // The least SymbolicCost::lower_s of the distinct survivors not in `top`
  // (infinity when every one is in it).
  double rest_lower_s = std::numeric_limits<double>::infinity();
  bool by_lower_bound = false;  // RankOptions::by_lower_bound
};

// Where the ranking is: strategies visited of `total`, the symbolic best so far.
struct RankProgress {
  uint64_t visited = 0, total = 0;
  const Candidate* best = nullptr;  // null before the first survivor
};

struct RankOptions {
  size_t top = 20;
  bool merge_twins = true;  // false: every survivor is its own candidate
  // Keep the `top` with the least SymbolicCost::lower_s (ties by symbolic
  // total, then index), in that order: the order of a branch and bound that
  // stops once the best simulated time is at most the next lower bound.
  bool by_lower_bound = false;
  // Called every kRankProgressEvery strategies of the ranking pass (optional).
  std::function<void(const RankProgress&)> progress;
};
inline constexpr uint64_t kRankProgressEvery = 1 << 16;

// Enumerates, pre-filters, merges twins, ranks every distinct survivor by
// EstimateCost and keeps the `top` cheapest (ties by canonical index), or
// the `top` with the least lower bound.
SearchResult SearchStrategies(const ModelDesc& m, const SearchSpace& space, const CostModel& cost,
                              const RankOptions& options);
SearchResult SearchStrategies(const ModelDesc& m, const SearchSpace& space, const CostModel& cost, size_t top);

// "tp 2 cp 1 ep 1 dp 4 pp 1 b 1 m 8 1f1b sp selective zero 1 order tp-dp".
std::string StrategyText(const Strategy& s);
std::string ScheduleText(const Strategy& s);  // "1f1b", "gpipe", "interleaved:2"
std::string OrderTextOf(const Strategy& s);   // the axes with size > 1, innermost first ("-" when none)

}  // namespace orrery::gen
