#include "explore/search.h"

#include <algorithm>
#include <chrono>

namespace orrery::gen {
namespace {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

// Orders candidates by symbolic total, then canonical index.
bool Cheaper(const Candidate& a, const Candidate& b) {
  if (a.cost.total_s != b.cost.total_s) return a.cost.total_s < b.cost.total_s;
  return a.index < b.index;
}
// Orders candidates by lower bound, then symbolic total, then canonical index.
bool LowerBelow(const Candidate& a, const Candidate& b) {
  if (a.cost.lower_s != b.cost.lower_s) return a.cost.lower_s < b.cost.lower_s;
  return Cheaper(a, b);
}

}  // namespace

const char* PruneReasonText(PruneReason r) {
  switch (r) {
    case PruneReason::kSurvives: return "survives";
    case PruneReason::kTpHeads: return "tp does not divide heads";
    case PruneReason::kTpKvHeads: return "tp does not divide kv_heads";
    case PruneReason::kTpFfnVocab: return "tp does not divide ffn and vocab";
    case PruneReason::kPpLayers: return "pp > layers";
    case PruneReason::kEpExperts: return "ep does not divide experts";
    case PruneReason::kCpSeqLen: return "cp does not divide seq_len";
    case PruneReason::kSpTokens: return "sp: (seq_len/cp)*b not divisible by tp";
    case PruneReason::kInterleavedLayers: return "interleaved: layers not divisible by pp*V";
    case PruneReason::kInterleavedMicrobatches: return "interleaved: microbatches not a multiple of pp";
    case PruneReason::kGlobalBatch: return "global batch not divisible by b*dp*ep";
    case PruneReason::kMemory: return "over HBM capacity";
  }
  return "?";
}

std::vector<std::array<int64_t, kNumAxes>> StrategyShapes(const ModelDesc& m, int64_t npus) {
  std::vector<std::array<int64_t, kNumAxes>> shapes;
  if (npus < 1) return shapes;
  for (int64_t tp : Divisors(npus)) {
    for (int64_t cp : Divisors(npus / tp)) {
      const std::vector<int64_t> eps = m.experts > 0 ? Divisors(npus / tp / cp) : std::vector<int64_t>{1};
      for (int64_t ep : eps) {
        for (int64_t pp : Divisors(npus / tp / cp / ep)) shapes.push_back({tp, cp, ep, npus / tp / cp / ep / pp, pp});
      }
    }
  }
  return shapes;
}

std::vector<std::array<Axis, kNumAxes>> RankOrders(const std::array<int64_t, kNumAxes>& sizes) {
  std::vector<int> big, small;
  for (int a = 0; a < kNumAxes; ++a) (sizes[a] > 1 ? big : small).push_back(a);
  std::vector<std::array<Axis, kNumAxes>> orders;
  do {
    std::array<Axis, kNumAxes> o{};
    int n = 0;
    for (int a : big) o[n++] = static_cast<Axis>(a);
    for (int a : small) o[n++] = static_cast<Axis>(a);
    orders.push_back(o);
  } while (std::next_permutation(big.begin(), big.end()));
  return orders;
}

PreFilter::PreFilter(const ModelDesc& m, uint64_t hbm_bytes) : m_(m), hbm_bytes_(hbm_bytes) {
  dense_prefix_.assign(m.layers + 1, 0);
  expert_prefix_.assign(m.layers + 1, 0);
  for (int64_t j = 0; j < m.layers; ++j) {
    const int64_t e = ExpertParams(m, j);
    dense_prefix_[j + 1] = dense_prefix_[j] + static_cast<uint64_t>(LayerParams(m, j) - e);
    expert_prefix_[j + 1] = expert_prefix_[j] + static_cast<uint64_t>(e);
  }
}

PruneReason PreFilter::Rules(const Strategy& s) const {
  const ModelDesc& m = m_;
  if (m.heads % s.tp != 0) return PruneReason::kTpHeads;
  if (m.kv_heads % s.tp != 0) return PruneReason::kTpKvHeads;
  if (m.ffn % s.tp != 0 || m.vocab % s.tp != 0) return PruneReason::kTpFfnVocab;
  if (m.layers < s.pp) return PruneReason::kPpLayers;
  if (s.ep > 1 && (m.experts == 0 || m.experts % s.ep != 0)) return PruneReason::kEpExperts;
  if (m.seq_len % s.cp != 0) return PruneReason::kCpSeqLen;
  if (s.sp && (m.seq_len / s.cp * s.microbatch_size) % s.tp != 0) return PruneReason::kSpTokens;
  if (s.schedule == Schedule::kInterleaved) {
    // chunks < 2 or pp < 2 is never enumerated; ValidateStrategy refuses it too.
    if (s.chunks < 2 || s.pp < 2 || m.layers % (s.pp * s.chunks) != 0) return PruneReason::kInterleavedLayers;
    if (s.microbatches % s.pp != 0) return PruneReason::kInterleavedMicrobatches;
  }
  if (s.global_batch != 0 && s.global_batch != s.microbatch_size * s.microbatches * s.dp * s.ep) {
    return PruneReason::kGlobalBatch;
  }
  return PruneReason::kSurvives;
}

uint64_t PreFilter::PeakBytes(const Strategy& s) const {
  const ModelDesc& m = m_;
  const uint64_t act_layer = ActivationBytesPerLayer(m.seq_len / s.cp, m.hidden, m.heads, s.microbatch_size, s.tp, s.sp,
                                                     s.recompute);
  const uint64_t h = m.hidden, vocab = m.vocab;
  const uint64_t first_extra = (vocab + (m.learned_positions ? m.seq_len : 0)) * h;
  const uint64_t last_extra = (s.pp > 1 || !m.tied_embeddings ? vocab * h : 0) + (m.rms_norm ? 1 : 2) * h;
  const uint64_t dense_dp = s.cp * s.ep * s.dp, expert_dp = s.cp * s.dp;
  uint64_t peak = 0;
  for (int64_t k = 0; k < s.pp; ++k) {
    // RankParamsSplit, from the prefix sums.
    const int64_t first = StageFirstLayer(m, s.pp, k), n = StageLayers(m, s.pp, k);
    uint64_t dense = dense_prefix_[first + n] - dense_prefix_[first];
    const uint64_t expert = (expert_prefix_[first + n] - expert_prefix_[first]) / (s.tp * s.ep);
    if (k == 0) dense += first_extra;
    if (k == s.pp - 1) dense += last_extra;
    dense /= s.tp;
    const uint64_t states = ModelStateBytes(dense, s.zero, dense_dp) +
                            (expert ? ModelStateBytes(expert, s.zero, expert_dp) : 0);
    // StageMemory's layers and microbatches (chunks) in flight.
    int64_t layers = n,
            in_flight = s.schedule == Schedule::kGpipe ? s.microbatches : std::min(s.pp - k, s.microbatches);
    if (s.schedule == Schedule::kInterleaved) {
      layers = m.layers / (s.pp * s.chunks);
      in_flight = std::min((s.pp - k - 1) * 2 + (s.chunks - 1) * s.pp + 1, s.microbatches * s.chunks);
    }
    peak = std::max(peak, states + act_layer * static_cast<uint64_t>(layers) * static_cast<uint64_t>(in_flight));
  }
  return peak;
}

PruneReason PreFilter::Check(const Strategy& s) const {
  const PruneReason r = Rules(s);
  if (r != PruneReason::kSurvives) return r;
  return PeakBytes(s) > hbm_bytes_ ? PruneReason::kMemory : PruneReason::kSurvives;
}

namespace {

// The per-dimension part of TwinKeyOf: false when the boundaries do not chain.
bool PlacementKey(const Strategy& s, const std::vector<Dim>& dims, TwinKey* key) {
  if (dims.empty() || dims.size() > static_cast<size_t>(kMaxTwinDims)) return false;
  const std::array<int64_t, kNumAxes> sizes{s.tp, s.cp, s.ep, s.dp, s.pp};
  std::array<int64_t, kMaxTwinDims + 1> bound{};  // NPUs below dimension d
  bound[0] = 1;
  for (size_t d = 0; d < dims.size(); ++d) bound[d + 1] = bound[d] * dims[d].npus;
  int64_t stride = 1;
  for (Axis a : s.order) {
    const int ai = static_cast<int>(a);
    const int64_t lo = stride, hi = stride * sizes[ai];
    stride = hi;
    if (sizes[ai] <= 1) continue;
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t l = std::max(lo, bound[d]), h = std::min(hi, bound[d + 1]);
      if (h <= l) continue;
      if (h % l != 0 || l % bound[d] != 0 || bound[d + 1] % h != 0) return false;
      int64_t* slot = &key->placement[(ai * kMaxTwinDims + d) * 2];
      slot[0] = h / l;
      slot[1] = dims[d].block == Block::kSwitch ? 0 : l / bound[d];
    }
  }
  return true;
}

// Same shape, microbatch size, schedule, SP and recomputation: the group of
// ForEachStrategy's inner loops (ZeRO, order) where every twin of a strategy lies.
bool SameGroup(const Strategy& a, const Strategy& b) {
  return a.tp == b.tp && a.cp == b.cp && a.ep == b.ep && a.dp == b.dp && a.pp == b.pp &&
         a.microbatch_size == b.microbatch_size && a.schedule == b.schedule && a.chunks == b.chunks && a.sp == b.sp &&
         a.recompute == b.recompute;
}

struct Pending {
  Candidate c;
  TwinKey key;
};

// The ranking pass: each group's distinct survivors costed and offered to a
// max-heap that keeps the `top` cheapest.
class Ranker {
 public:
  Ranker(const ModelDesc& m, const CostModel& cost, const RankOptions& o, SearchResult* res)
      : m_(m), cost_(cost), o_(o), res_(res) {}

  void Add(const Strategy& s, uint64_t index) {
    if (!group_.empty() && !SameGroup(group_.front().c.strategy, s)) Flush();
    TwinKey key;
    if (o_.merge_twins) {
      key = TwinKeyOf(s, cost_.dims);
      for (Pending& p : group_) {
        if (p.key == key) {
          ++p.c.twins;
          return;
        }
      }
    }
    group_.push_back(Pending{Candidate{s, index, {}, 0}, key});
  }

  void Flush() {
    for (Pending& p : group_) Offer(p.c);
    group_.clear();
  }

  const Candidate* best() const { return has_best_ ? &best_ : nullptr; }

 private:
  void Offer(Candidate& c) {
    c.cost = EstimateCost(m_, c.strategy, cost_);
    ++res_->distinct;
    if (!has_best_ || Cheaper(c, best_)) best_ = c, has_best_ = true;
    std::vector<Candidate>& heap = res_->top;
    const auto before = o_.by_lower_bound ? LowerBelow : Cheaper;
    if (heap.size() == o_.top) {
      if (!before(c, heap.front())) {
        res_->rest_lower_s = std::min(res_->rest_lower_s, c.cost.lower_s);
        return;
      }
      std::pop_heap(heap.begin(), heap.end(), before);
      res_->rest_lower_s = std::min(res_->rest_lower_s, heap.back().cost.lower_s);
      heap.back() = c;
    } else {
      heap.push_back(c);
    }
    std::push_heap(heap.begin(), heap.end(), before);
  }

  const ModelDesc& m_;
  const CostModel& cost_;
  const RankOptions& o_;
  SearchResult* res_;
  std::vector<Pending> group_;
  Candidate best_;
  bool has_best_ = false;
};

}  // namespace

TwinKey TwinKeyOf(const Strategy& s, const std::vector<Dim>& dims) {
  TwinKey key;
  key.zero = s.zero == 2 ? 1 : s.zero;
  if (!PlacementKey(s, dims, &key)) {
    key.placement.fill(0);
    for (int i = 0; i < kNumAxes; ++i) key.placement[i] = 1 + static_cast<int64_t>(s.order[i]);  // the order itself
    key.placement[kNumAxes] = -1;  // never equal to a placement's key
  }
  return key;
}

SearchResult SearchStrategies(const ModelDesc& m, const SearchSpace& space, const CostModel& cost,
                              const RankOptions& options) {
  SearchResult res;
  const PreFilter filter(m, space.hbm_bytes);
  // Pass 1, timed: enumeration and pre-filter alone (the rate docs/benchmarks.md reports).
  const auto t0 = std::chrono::steady_clock::now();
  res.enumerated = ForEachStrategy(m, space, [&](const Strategy& s, uint64_t) {
    ++res.pruned[static_cast<int>(filter.Check(s))];
  });
  res.prefilter_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Pass 2: the survivors, twins merged, ranked.
  res.by_lower_bound = options.by_lower_bound;
  if (options.top == 0) return res;
  Ranker ranker(m, cost, options, &res);
  ForEachStrategy(m, space, [&](const Strategy& s, uint64_t index) {
    if (options.progress && index % kRankProgressEvery == 0 && index > 0) {
      options.progress(RankProgress{index, res.enumerated, ranker.best()});
    }
    if (filter.Check(s) != PruneReason::kSurvives) return;
    ranker.Add(s, index);
  });
  ranker.Flush();
  std::sort(res.top.begin(), res.top.end(), options.by_lower_bound ? LowerBelow : Cheaper);
  return res;
}

SearchResult SearchStrategies(const ModelDesc& m, const SearchSpace& space, const CostModel& cost, size_t top) {
  RankOptions o;
  o.top = top;
  return SearchStrategies(m, space, cost, o);
}

std::string ScheduleText(const Strategy& s) {
  switch (s.schedule) {
    case Schedule::k1F1B: return "1f1b";
    case Schedule::kGpipe: return "gpipe";
    case Schedule::kInterleaved: return "interleaved:" + std::to_string(s.chunks);
  }
  return "?";
}

std::string OrderTextOf(const Strategy& s) {
  const std::array<int64_t, kNumAxes> sizes{s.tp, s.cp, s.ep, s.dp, s.pp};
  std::string out;
  for (Axis a : s.order) {
    if (sizes[static_cast<int>(a)] <= 1) continue;
    if (!out.empty()) out += '-';
    out += AxisName(a);
  }
  return out.empty() ? "-" : out;
}

std::string StrategyText(const Strategy& s) {
  const char* rec = s.recompute == Recompute::kNone        ? "none"
                    : s.recompute == Recompute::kSelective ? "selective"
                                                           : "full";
  return "tp " + std::to_string(s.tp) + " cp " + std::to_string(s.cp) + " ep " + std::to_string(s.ep) + " dp " +
         std::to_string(s.dp) + " pp " + std::to_string(s.pp) + " b " + std::to_string(s.microbatch_size) + " m " +
         std::to_string(s.microbatches) + " " + ScheduleText(s) + (s.sp ? " sp" : " no-sp") + " " + rec + " zero " +
         std::to_string(s.zero) + " order " + OrderTextOf(s);
}

}  // namespace orrery::gen
