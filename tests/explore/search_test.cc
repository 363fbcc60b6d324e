// `orrery search` (issue 12 part 6): enumeration counted by hand, prune
// reasons on a hand case, the pre-filter equal to ValidateStrategy +
// CheckCapacity, the symbolic cost on hand-computed cases, Spearman on hand
// data, an end-to-end search whose output does not depend on --jobs, and bad
// inputs.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>

#include "explore/search.h"
#include "explore/search_run.h"
#include "gen/gen_source.h"
#include "gen/summary.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

// Every operator new of this test binary, counted (the pre-filter must not allocate).
// GCC 12 warns that the replaced delete frees what the replaced new returned
// as if they were mismatched; they are the pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
std::atomic<uint64_t> g_allocations{0};

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
// Every unaligned delete pairs with the news above (std::get_temporary_buffer
// uses the nothrow form; AddressSanitizer reports a mismatch if one is left
// to the runtime).
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace orrery::gen {
namespace {

using orrery::testing::RunCliCapture;
using orrery::testing::TempDir;

// s 32, h 64, 4 heads of 16, ffn 256, V 128: GPT-shaped (biases, LayerNorm,
// learned positions, tied embeddings).
ModelDesc Tiny(int64_t layers) { return testing::TinyModel(layers, 32); }

constexpr uint64_t kHuge = uint64_t{1} << 62;

// npus 4 = 2^2: the shapes (tp, cp, pp, dp) are the 10 ways to spread two
// factors of 2 over four axes (ep is 1: the model is dense). Per shape:
// 4 microbatch sizes × schedules (2 when pp = 1, else 1f1b, gpipe,
// interleaved:2, interleaved:4) × SP (2 when tp > 1) × 3 recompute modes ×
// ZeRO (4 when cp·dp > 1) × k! orders (k axes of size > 1):
//   (4,1,1,1) 4·2·2·3·1·1 = 48    (1,4,1,1) 4·2·1·3·4·1 = 96   (1,1,4,1) 4·4·1·3·1·1 = 48
//   (1,1,1,4) 4·2·1·3·4·1 = 96    (2,2,1,1) 4·2·2·3·4·2 = 384  (2,1,2,1) 4·4·2·3·1·2 = 192
//   (2,1,1,2) 4·2·2·3·4·2 = 384   (1,2,2,1) 4·4·1·3·4·2 = 384  (1,2,1,2) 4·2·1·3·4·2 = 192
//   (1,1,2,2) 4·4·1·3·4·2 = 384   total 2,208.
TEST(SearchEnumeration, CountOnATinyModelByHand) {
  const ModelDesc m = Tiny(4);
  SearchSpace space;
  space.npus = 4;
  space.global_batch = 8;
  EXPECT_EQ(StrategyShapes(m, 4).size(), 10u);
  uint64_t expected_index = 0;
  Strategy first;
  const uint64_t n = ForEachStrategy(m, space, [&](const Strategy& s, uint64_t index) {
    EXPECT_EQ(index, expected_index++);
    if (index == 0) first = s;
  });
  EXPECT_EQ(n, 2208u);
  // Canonical order starts with tp 1, cp 1, pp 1 (dp 4), b 1, 1f1b, no SP, no recompute, ZeRO-0.
  EXPECT_EQ(StrategyText(first), "tp 1 cp 1 ep 1 dp 4 pp 1 b 1 m 2 1f1b no-sp none zero 0 order dp");

  // A MoE model adds ep: on 2 NPUs one of the five axes is 2 (dense: four).
  ModelDesc moe = Tiny(4);
  moe.experts = 4, moe.top_k = 2, moe.expert_ffn = 128;
  EXPECT_EQ(StrategyShapes(moe, 2).size(), 5u);
  EXPECT_EQ(StrategyShapes(m, 2).size(), 4u);
}

TEST(SearchEnumeration, RankOrdersArePermutationsOfTheAxesAboveOne) {
  const auto orders = RankOrders({2, 1, 1, 2, 2});  // tp, dp, pp: 3! = 6
  ASSERT_EQ(orders.size(), 6u);
  auto text = [](const std::array<Axis, kNumAxes>& o) {
    std::string s;
    for (Axis a : o) s += std::string(s.empty() ? "" : "-") + AxisName(a);
    return s;
  };
  EXPECT_EQ(text(orders[0]), "tp-dp-pp-cp-ep");
  EXPECT_EQ(text(orders[1]), "tp-pp-dp-cp-ep");
  EXPECT_EQ(text(orders[5]), "pp-dp-tp-cp-ep");
  EXPECT_EQ(RankOrders({1, 1, 1, 1, 1}).size(), 1u);
}

// 3 layers, 3 heads of 16 (h 48), ffn 192, V 96, s 16; 2 NPUs, G 4:
// - tp 2: 3 heads not divisible: 4 b × 2 schedules × 2 SP × 3 = 48.
// - cp 2: per b 2 schedules × 3 recompute × 4 ZeRO = 24; b = 8 gives m = 4/8
//   = 0 (not whole): 24 batch, 72 survive.
// - pp 2: per b 4 schedules × 3 = 12; interleaved:2 and :4 need 3 layers
//   divisible by 4 and 8: 6 per b (24); 1f1b/gpipe b = 8: 6 batch; 18 survive.
// - dp 2: per b 24; m = 4/(2b) is whole for b 1, 2: 48 survive, 48 batch.
// Total 288 = 48 heads + 78 batch + 24 interleaved + 138 survivors.
TEST(SearchPrune, ReasonsCountedOnAHandCase) {
  ModelDesc m;
  m.name = "odd";
  m.layers = 3, m.hidden = 48, m.ffn = 192, m.heads = 3, m.kv_heads = 3, m.head_dim = 16, m.vocab = 96, m.seq_len = 16;
  SearchSpace space;
  space.npus = 2;
  space.global_batch = 4;
  space.hbm_bytes = kHuge;
  const PreFilter filter(m, space.hbm_bytes);
  PruneCounts counts{};
  EXPECT_EQ(ForEachStrategy(m, space,
                            [&](const Strategy& s, uint64_t) { ++counts[static_cast<int>(filter.Check(s))]; }),
            288u);
  EXPECT_EQ(counts[static_cast<int>(PruneReason::kTpHeads)], 48u);
  EXPECT_EQ(counts[static_cast<int>(PruneReason::kGlobalBatch)], 78u);
  EXPECT_EQ(counts[static_cast<int>(PruneReason::kInterleavedLayers)], 24u);
  EXPECT_EQ(counts[static_cast<int>(PruneReason::kSurvives)], 138u);
  EXPECT_EQ(counts[static_cast<int>(PruneReason::kMemory)], 0u);

  // One byte of HBM: every one of the 138 is over capacity.
  space.hbm_bytes = 1;
  const SearchResult r = SearchStrategies(m, space, CostModel{1e12, 0, {}}, 5);
  EXPECT_EQ(r.enumerated, 288u);
  EXPECT_EQ(r.pruned[static_cast<int>(PruneReason::kMemory)], 138u);
  EXPECT_EQ(r.pruned[static_cast<int>(PruneReason::kSurvives)], 0u);
  EXPECT_TRUE(r.top.empty());
}

// PreFilter::Check allocates nothing: every strategy of a model on 8 NPUs
// checked with the allocation counter unchanged (a ValidateStrategy failure,
// which builds its message, moves it: the counter works).
TEST(SearchPrune, CheckAllocatesNothing) {
  const ModelDesc m = Tiny(4);
  SearchSpace space;
  space.npus = 8;
  space.global_batch = 16;
  std::vector<Strategy> all;
  ForEachStrategy(m, space, [&](const Strategy& s, uint64_t) { all.push_back(s); });
  const PreFilter filter(m, 2'000'000);
  PruneCounts counts{};
  const uint64_t before = g_allocations.load();
  for (const Strategy& s : all) ++counts[static_cast<int>(filter.Check(s))];
  EXPECT_EQ(g_allocations.load() - before, 0u);
  EXPECT_GT(counts[static_cast<int>(PruneReason::kSurvives)], 0u);
  EXPECT_GT(counts[static_cast<int>(PruneReason::kMemory)], 0u);
  Strategy bad;
  bad.tp = 8;
  EXPECT_FALSE(ValidateStrategy(m, bad).ok());
  EXPECT_GT(g_allocations.load() - before, 0u);
}

// The keyword of ValidateStrategy's message for each rule.
const char* Keyword(PruneReason r) {
  switch (r) {
    case PruneReason::kTpHeads: return "attention heads";
    case PruneReason::kTpKvHeads: return "KV heads";
    case PruneReason::kTpFfnVocab: return "does not divide ffn";
    case PruneReason::kPpLayers: return "stages but";
    case PruneReason::kEpExperts: return "experts of";
    case PruneReason::kCpSeqLen: return "does not divide seq_len";
    case PruneReason::kSpTokens: return "--sp:";
    case PruneReason::kInterleavedLayers: return "equal chunks";
    case PruneReason::kInterleavedMicrobatches: return "is not a multiple of --pp";
    case PruneReason::kGlobalBatch: return "--global-batch";
    default: return "";
  }
}

// Every strategy of two small models on 8 NPUs: the allocation-free
// pre-filter agrees with ValidateStrategy (same first rule) and with
// CheckCapacity / StageMemory (same peak bytes). Together the models hit
// every reason.
TEST(SearchPrune, PreFilterEqualsValidateStrategyAndCheckCapacity) {
  ModelDesc dense = Tiny(4);
  dense.seq_len = 6;  // tp 4 + SP: 6 tokens not divisible; cp 4, 8 do not divide 6
  ModelDesc moe = Tiny(4);
  moe.name = "moe", moe.kv_heads = 2, moe.ffn = 64, moe.vocab = 127, moe.seq_len = 16;
  moe.experts = 4, moe.top_k = 2, moe.expert_ffn = 64, moe.moe_layer_freq = 2;
  PruneCounts all{};
  for (const ModelDesc* m : {&dense, &moe}) {
    SearchSpace space;
    space.npus = 8;
    space.global_batch = 16;
    // A capacity between the smallest and the largest valid footprint.
    uint64_t lo = kHuge, hi = 0;
    const PreFilter probe(*m, kHuge);
    ForEachStrategy(*m, space, [&](const Strategy& s, uint64_t) {
      if (probe.Check(s) != PruneReason::kSurvives) return;
      lo = std::min(lo, probe.PeakBytes(s));
      hi = std::max(hi, probe.PeakBytes(s));
    });
    ASSERT_LT(lo, hi) << m->name;
    space.hbm_bytes = (lo + hi) / 2;
    const PreFilter filter(*m, space.hbm_bytes);
    uint64_t checked = 0;
    ForEachStrategy(*m, space, [&](const Strategy& s, uint64_t index) {
      const PruneReason r = filter.Check(s);
      ++all[static_cast<int>(r)];
      const Status valid = ValidateStrategy(*m, s);
      if (r != PruneReason::kSurvives && r != PruneReason::kMemory) {
        ASSERT_FALSE(valid.ok()) << m->name << " " << index;
        EXPECT_NE(valid.message().find(Keyword(r)), std::string::npos)
            << m->name << " " << StrategyText(s) << ": " << PruneReasonText(r) << " vs " << valid.message();
        return;
      }
      ASSERT_TRUE(valid.ok()) << m->name << " " << StrategyText(s) << ": " << valid.message();
      ++checked;
      if (checked % 7 != 0 && r == PruneReason::kSurvives) return;  // StageMemory allocates: a sample
      uint64_t peak = 0;
      for (int64_t k = 0; k < s.pp; ++k) peak = std::max(peak, StageMemory(*m, s, k).total_bytes);
      EXPECT_EQ(filter.PeakBytes(s), peak) << StrategyText(s);
      EXPECT_EQ(CheckCapacity(*m, s, space.hbm_bytes).ok(), r == PruneReason::kSurvives) << StrategyText(s);
    });
  }
  for (int k = 0; k < kNumPruneReasons; ++k) {
    EXPECT_GT(all[k], 0u) << "no strategy pruned for: " << PruneReasonText(static_cast<PruneReason>(k));
  }
}

// One NPU, 2 layers, b 1, m 1, roofline off (peak 10^12 FLOP/s): per layer
// forward QKV 2·32·64·192 = 786,432 + projection 2·32·64·64 = 262,144 + core
// 4·32²·64 = 262,144 + MLP 2·32·64·256·2 = 2,097,152 = 3,407,872; logits
// 2·32·64·128 = 524,288; iteration 3·(2·3,407,872 + 524,288) = 22,020,096
// FLOPs = 22.020096 us. Selective adds 2 cores (524,288), full 2 layers'
// forward (6,815,744).
TEST(SearchCost, ComputeOnOneNpuByHand) {
  const ModelDesc m = Tiny(2);
  Strategy s;
  s.npus = 1;
  const CostModel c{1e12, 0, {}};
  const std::pair<Recompute, uint64_t> cases[] = {{Recompute::kNone, 22020096},
                                                  {Recompute::kSelective, 22544384},
                                                  {Recompute::kFull, 28835840}};
  for (const auto& [r, flops] : cases) {
    s.recompute = r;
    const SymbolicCost cost = EstimateCost(m, s, c);
    EXPECT_EQ(FlopsText(cost.flops_per_rank), std::to_string(flops));
    EXPECT_EQ(FlopsText(ModelFlops(m, 1, r)), std::to_string(flops));
    EXPECT_NEAR(cost.total_s, flops * 1e-12, 1e-18);
    EXPECT_NEAR(cost.compute_s, cost.total_s, 1e-18);
    EXPECT_EQ(cost.tp_s + cost.pp_s + cost.dp_s + cost.bubble_s, 0.0);
  }
  // Roofline at 10^9 B/s: every block is memory-bound. Bytes: attention
  // weights (64·192 + 64·64)·2 = 32,768 + input and output 2·4,096 = 40,960;
  // MLP 2·64·256·2 + 8,192 = 73,728; logits (128·64 + 32·64 + 32·128)·2 =
  // 28,672. Forward 2·(40,960 + 73,728) + 28,672 = 258,048 B, backward twice:
  // 774,144 B = 774.144 us.
  s.recompute = Recompute::kNone;
  EXPECT_NEAR(EstimateCost(m, s, CostModel{1e12, 1e9, {}}).total_s, 774.144e-6, 1e-15);
}

// tp 2 × dp 2 × pp 2 on Ring(2, 1 GB/s) × Switch(4, 0.5 GB/s), no latency,
// order tp-dp-pp: tp on dim0 (ranks 0,1), dp (0,2) and pp (0,4) on dim1.
// Compute is made negligible (peak 10^30). 2 layers, b 1, m 2 (G 4), 1f1b.
// - TP: 4 all-reduces per layer and microbatch of b·s·h·2 = 4,096 B, each
//   2·(1/2)·4,096 B / 2^30 B/s; one layer per stage, m 2: 8·4,096/2^30.
// - PP: an activation and a gradient per microbatch, 4,096 B / 2^29 B/s
//   each: 2·2·4,096/2^29 = 32,768/2^30.
// - bubble: (p−1)/(m+p−1) = 1/3; one microbatch slot (TP + PP = 32,768/2^30).
// - DP: stage 0 holds layer 0 (49,984 parameters: attention 16,384 + biases
//   256, MLP 32,768 + 320, norms 256) + embeddings (128 + 32)·64 = 10,240,
//   / tp 2 = 30,112 parameters = 60,224 B, all-reduced over 2 ranks at 2^29
//   B/s: 60,224/2^29, exposed after a negligible backward (stage 1 holds
//   49,984 + 8,192 + 128 = 58,304 / 2, less).
// Total (32,768 + 32,768 + 32,768 + 120,448) / 2^30 s.
TEST(SearchCost, CommunicationOverTheSlowestSpannedDimensionByHand) {
  const ModelDesc m = Tiny(2);
  Strategy s;
  s.tp = 2, s.dp = 2, s.pp = 2, s.npus = 8, s.microbatches = 2;
  s.order = {Axis::kTp, Axis::kDp, Axis::kPp, Axis::kCp, Axis::kEp};
  ASSERT_TRUE(ValidateStrategy(m, s).ok());
  CostModel c{1e30, 0, {Dim{Block::kRing, 2, 1.0, 0, 1}, Dim{Block::kSwitch, 4, 0.5, 0, 1}}};
  const double gib = 1073741824.0;
  const SymbolicCost cost = EstimateCost(m, s, c);
  EXPECT_NEAR(cost.tp_s, 32768 / gib, 1e-15);
  EXPECT_NEAR(cost.pp_s, 32768 / gib, 1e-15);
  EXPECT_NEAR(cost.bubble, 1.0 / 3, 1e-15);
  EXPECT_NEAR(cost.bubble_s, 32768 / gib, 1e-15);
  EXPECT_NEAR(cost.dp_s, 120448 / gib, 1e-15);
  EXPECT_NEAR(cost.total_s, (32768 + 32768 + 32768 + 120448) / gib, 1e-15);

  // TP placed on the slow dimension instead (order dp-tp-pp: tp's ranks 0,2):
  // its time doubles.
  s.order = {Axis::kDp, Axis::kTp, Axis::kPp, Axis::kCp, Axis::kEp};
  EXPECT_NEAR(EstimateCost(m, s, c).tp_s, 2 * 32768 / gib, 1e-15);
  // Latency: 1 us on the switch, two links away, 4 chunks: the TP all-reduce
  // over 2 ranks has 2 steps of 2 us per chunk: 8 collectives × 16 us more.
  c.dims[1].latency_ns = 1000;
  c.splits = 4;
  EXPECT_NEAR(EstimateCost(m, s, c).tp_s, 2 * 32768 / gib + 8 * 16e-6, 1e-12);

  // Interleaved 1F1B with V 2 on 4 layers, m 2: bubble (p−1)/(m·V+p−1) = 1/5.
  const ModelDesc m4 = Tiny(4);
  s.schedule = Schedule::kInterleaved, s.chunks = 2;
  ASSERT_TRUE(ValidateStrategy(m4, s).ok());
  EXPECT_NEAR(EstimateCost(m4, s, c).bubble, 0.2, 1e-15);
}

// The per-stage FLOPs the cost uses add up, over every rank, to the closed
// form (ModelFlops) for TP, CP, EP, PP, interleaving and recomputation.
TEST(SearchCost, StageFlopsOverAllRanksEqualModelFlops) {
  ModelDesc moe = Tiny(4);
  moe.experts = 4, moe.top_k = 2, moe.expert_ffn = 128, moe.moe_layer_freq = 2;
  struct Case {
    const ModelDesc m;
    int64_t tp, cp, ep, dp, pp, b, mbs, chunks;
  };
  const Case cases[] = {{Tiny(4), 2, 2, 1, 1, 2, 2, 4, 1},
                        {Tiny(4), 4, 1, 1, 2, 1, 1, 3, 1},
                        {Tiny(4), 1, 1, 1, 1, 2, 4, 4, 2},
                        {moe, 2, 1, 2, 2, 2, 1, 2, 1},
                        {moe, 1, 2, 4, 1, 1, 2, 1, 1}};
  for (const Case& k : cases) {
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      Strategy s;
      s.tp = k.tp, s.cp = k.cp, s.ep = k.ep, s.dp = k.dp, s.pp = k.pp, s.microbatch_size = k.b, s.microbatches = k.mbs;
      if (k.chunks > 1) s.schedule = Schedule::kInterleaved, s.chunks = k.chunks;
      s.recompute = r;
      ASSERT_TRUE(ValidateStrategy(k.m, s).ok()) << ValidateStrategy(k.m, s).message();
      Flops total = 0;
      for (int64_t stage = 0; stage < s.pp; ++stage)
        total += StageRankFlops(k.m, s, stage) * (s.tp * s.cp * s.ep * s.dp);
      const uint64_t batch = k.b * k.mbs * k.dp * k.ep;
      EXPECT_EQ(FlopsText(total), FlopsText(ModelFlops(k.m, batch, r))) << StrategyText(s);
      // And the generator's graphs agree.
      auto w = GenerateDense(k.m, s);
      ASSERT_TRUE(w.ok());
      EXPECT_EQ(FlopsText(TotalFlops(w.value())), FlopsText(total)) << StrategyText(s);
    }
  }
}

TEST(SearchSpearman, HandData) {
  // No ties: d = 0, 1, −1, 0; 1 − 6·2/(4·15) = 0.8.
  EXPECT_NEAR(SpearmanRho({1, 2, 3, 4}, {10, 30, 20, 40}), 0.8, 1e-15);
  EXPECT_NEAR(SpearmanRho({1, 2, 3}, {9, 5, 1}), -1.0, 1e-15);
  // Ties: y ranks 1, 2, 3.5, 5, 3.5; deviations from 3: x −2, −1, 0, 1, 2,
  // y −2, −1, 0.5, 2, 0.5; Σxy 8, Σx² 10, Σy² 9.5: 8/√95.
  EXPECT_NEAR(SpearmanRho({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 8 / std::sqrt(95.0), 1e-15);
  EXPECT_TRUE(std::isnan(SpearmanRho({1}, {2})));
  EXPECT_TRUE(std::isnan(SpearmanRho({1, 2}, {3, 3})));
}

const char kTinyYaml[] = "name: tiny\nlayers: 4\nhidden: 64\nheads: 4\nffn: 256\nvocab: 128\nseq_len: 32\n";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "preferred-dataset-splits": 4})";
const char kNet8[] = "Ring(2,300GB/s,500ns)_Switch(4,50GB/s,2us)";

std::string OrderFlag(const Strategy& s) {
  std::string o;
  for (Axis a : s.order) o += std::string(o.empty() ? "" : "-") + AxisName(a);
  return o;
}

// The search on 8 NPUs: the winner is the fastest of those simulated, its
// time is what `run --generate` gives for the same strategy, and the output
// is identical with 1 and 2 jobs.
TEST(SearchEndToEnd, TinyModelOnEightNpus) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("sys.json", kSystem);
  const std::string args = "search --model=" + d.File("tiny.yml") + " --npus=8 --global-batch=16 --network=\"" + kNet8 +
                           "\" --system=" + d.File("sys.json") + " --top=4 --simulate=all";
  std::string out1, out2, err;
  ASSERT_EQ(RunCliCapture(args + " --jobs=1", &out1, &err), 0) << err;
  ASSERT_EQ(RunCliCapture(args + " --jobs=2 --csv=" + d.File("t.csv"), &out2, &err), 0) << err;
  EXPECT_EQ(out1, out2);
  EXPECT_NE(out1.find("top 4 by symbolic cost, 4 of them simulated"), std::string::npos) << out1;
  // The engine line counts the same 4 (rank classes or symmetric vs full engine).
  EXPECT_NE(out1.find(" of 4 simulated by rank classes or one symmetric rank"), std::string::npos) << out1;

  // Library: the same top 4 and simulated times.
  auto m = LoadModel(d.File("tiny.yml"));
  ASSERT_TRUE(m.ok());
  SearchSpace space;
  space.npus = 8, space.global_batch = 16;
  CostModel c{156e12, 2039e9, {Dim{Block::kRing, 2, 300, 500, 1}, Dim{Block::kSwitch, 4, 50, 2000, 1}}, 4, 10e-9};
  const SearchResult r = SearchStrategies(m.value(), space, c, 4);
  ASSERT_EQ(r.top.size(), 4u);
  SimulateOptions so;
  so.system_path = d.File("sys.json");
  so.network = kNet8;
  so.jobs = 3;
  const std::vector<Simulated> sims = SimulateCandidates(m.value(), r.top, so);
  size_t best = 0;
  for (size_t i = 0; i < sims.size(); ++i) {
    ASSERT_TRUE(sims[i].done) << sims[i].error;
    if (sims[i].iteration_ns < sims[best].iteration_ns ||
        (sims[i].iteration_ns == sims[best].iteration_ns && r.top[i].index < r.top[best].index)) {
      best = i;
    }
  }
  const std::string winner = "winner: index " + std::to_string(r.top[best].index) + ": " +
                             StrategyText(r.top[best].strategy);
  EXPECT_NE(out1.find(winner), std::string::npos) << winner << "\n" << out1;

  // The winner simulated on its own through `run --generate`.
  const Strategy& s = r.top[best].strategy;
  std::ostringstream gen;
  gen << "--model=" << d.File("tiny.yml") << " --tp=" << s.tp << " --cp=" << s.cp << " --dp=" << s.dp
      << " --pp=" << s.pp << " --microbatch-size=" << s.microbatch_size << " --microbatches=" << s.microbatches
      << " --schedule=" << ScheduleText(s) << (s.sp ? " --sp" : "") << " --recompute="
      << (s.recompute == Recompute::kNone        ? "none"
          : s.recompute == Recompute::kSelective ? "selective"
                                                 : "full")
      << " --zero=" << s.zero << " --order=" << OrderFlag(s);
  auto source = GeneratedSource(gen.str());
  ASSERT_TRUE(source.ok()) << source.status().message();
  RunConfig rc;
  rc.source = source.value();
  rc.files.system = d.File("sys.json");
  rc.files.network = kNet8;
  auto alone = RunSimulation(rc, DefaultBackends());
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(orrery::testing::MaxFinished(alone.value()), sims[best].iteration_ns);

  // The CSV holds the same 4 rows under a header, the winner first.
  std::ifstream csv(d.File("t.csv"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(
      lines[0],
      "rank,tp,cp,ep,dp,pp,b,m,schedule,sp,recompute,zero,order,symbolic_ms,lower_bound_ms,simulated_ms,twins,index");
  EXPECT_EQ(lines[1].substr(0, 2), "1,");
  EXPECT_NE(lines[1].find("," + std::to_string(r.top[best].index)), std::string::npos) << lines[1];
}

TEST(SearchEndToEnd, TimeLimitZeroSimulatesNone) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("sys.json", kSystem);
  std::string out, err;
  ASSERT_EQ(RunCliCapture("search --model=" + d.File("tiny.yml") + " --npus=8 --global-batch=16 --network=\"" + kNet8 +
                              "\" --system=" + d.File("sys.json") + " --top=3 --time-limit=0",
                          &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("top 3 by lower bound (branch and bound: simulated in that order until the winner is stable), 0 "
                     "of them simulated"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("winner: none simulated"), std::string::npos) << out;
}

TEST(SearchEndToEnd, BadInputsExitTwoWithTheReason) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("sys.json", kSystem);
  d.Write("noroof.json", R"({"preferred-dataset-splits": 4})");
  // 1 layer, 1 head, seq_len 1: only dp can grow, and G 4 is not a multiple of 8·b.
  d.Write("one.yml", "name: one\nlayers: 1\nhidden: 8\nheads: 1\nffn: 32\nvocab: 8\nseq_len: 1\n");
  const std::string net = std::string(" --network=\"") + kNet8 + "\"";
  const std::string sys = " --system=" + d.File("sys.json");
  const std::string tiny = " --model=" + d.File("tiny.yml");
  const std::pair<std::string, std::string> cases[] = {
      {"search --model=gpt3-17b --npus=8 --global-batch=16" + net + sys, "did you mean 'gpt3-175b'"},
      {"search" + tiny + " --npus=0 --global-batch=16" + net + sys, "--npus = \"0\""},
      {"search" + tiny + " --npus=8 --global-batch=x" + net + sys, "--global-batch = \"x\""},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --top=0", "--top = \"0\""},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --jobs=two", "--jobs = \"two\""},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --time-limit=-1", "--time-limit = \"-1\""},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --simulate=best",
       "--simulate = \"best\": allowed: stable (stop once no candidate left can beat the best simulated), all"},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --quiet --progress",
       "--quiet and --progress contradict each other; give one"},
      {"search" + tiny + " --npus=8 --global-batch=16" + sys, "'orrery search' needs --network"},
      {"search" + tiny + " --npus=8 --global-batch=16" + net, "'orrery search' needs --system"},
      {"search" + tiny + " --npus=16 --global-batch=16" + net + sys, "--npus = 16 but the network"},
      {"search --model=dlrm-mlperf --npus=8 --global-batch=16" + net + sys, "a DLRM"},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + " --system=" + d.File("noroof.json"),
       "roofline-enabled is 0"},
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --hbm-gb=0.000001",
       "no strategy survives: tiny on 8 NPUs with global batch 16"},
      {"search --model=" + d.File("one.yml") + " --npus=8 --global-batch=4" + net + sys,
       "global batch not divisible by b*dp*ep ("},
      // Found by fuzzing (search_args): 1e18 GB is 1.07e27 bytes, beyond the 64-bit capacity it was cast to.
      {"search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --hbm-gb=1e18",
       "--hbm-gb = \"1e18\": out of range; allowed: a number > 0 and <= 1e+09"},
  };
  for (const auto& [args, want] : cases) {
    std::string out, err;
    EXPECT_EQ(RunCliCapture(args, &out, &err), 2) << args << "\n" << err;
    EXPECT_NE(err.find(want), std::string::npos) << args << "\n" << err;
  }
  std::string out, err;
  RunCliCapture("search" + tiny + " --npus=8 --global-batch=16" + net + sys + " --hbm-gb=0.000001", &out, &err);
  EXPECT_NE(err.find("over HBM capacity ("), std::string::npos) << err;
}

}  // namespace
}  // namespace orrery::gen
