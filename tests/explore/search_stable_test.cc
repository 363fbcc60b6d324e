// `orrery search`, issue 30 part 5: twins merged before simulation (and shown
// to simulate identically), the cooperative stop of a running simulation, the
// stable-winner stop rule on synthetic lists, and the lower bound against a
// hand-derived closed form.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>

#include "explore/search.h"
#include "explore/search_run.h"
#include "gen/gen_source.h"
#include "report/report.h"
#include "run/build.h"
#include "run/run.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

using orrery::testing::RunCliCapture;
using orrery::testing::TempDir;

const char kTinyYaml[] = "name: tiny\nlayers: 4\nhidden: 64\nheads: 4\nffn: 256\nvocab: 128\nseq_len: 32\n";
const char kSystem[] =
    R"({"roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "preferred-dataset-splits": 4})";
// Two Switch dimensions: 4 NPUs, then 2.
const char kNet[] = "Switch(4,300GB/s,500ns)_Switch(2,50GB/s,2us)";
std::vector<Dim> NetDims() { return {Dim{Block::kSwitch, 4, 300, 500, 1}, Dim{Block::kSwitch, 2, 50, 2000, 1}}; }

std::string OrderText(const Strategy& s) { return OrderTextOf(s); }

// tp 2 · dp 2 · pp 2 on Switch(4) × Switch(2), b 1, 1f1b, no SP, no
// recomputation: ZeRO 0..3 × 3! orders = 24 strategies. The two axes that
// share dimension 0 decide the placement ({tp,dp}, {tp,pp} or {dp,pp}: two
// orders each), and ZeRO-2 is ZeRO-1's graph: 3 ZeRO classes × 3 placements
// = 9 distinct; the ZeRO-1 representative of a placement has 3 twins (its
// other order, and both orders with ZeRO-2), ZeRO-0 and ZeRO-3 ones 1.
TEST(SearchTwins, ZeroOneTwoAndOrdersOnASwitchCollapseCounted) {
  const ModelDesc m = testing::TinyModel(4, 32);
  SearchSpace space;
  space.npus = 8, space.global_batch = 16, space.microbatch_sizes = {1};
  std::vector<Candidate> group;
  ForEachStrategy(m, space, [&](const Strategy& s, uint64_t index) {
    if (s.tp == 2 && s.dp == 2 && s.pp == 2 && s.schedule == Schedule::k1F1B && !s.sp &&
        s.recompute == Recompute::kNone) {
      group.push_back(Candidate{s, index, {}, 0});
    }
  });
  ASSERT_EQ(group.size(), 24u);
  std::vector<TwinKey> keys;
  for (const Candidate& c : group) {
    const TwinKey k = TwinKeyOf(c.strategy, NetDims());
    bool seen = false;
    for (const TwinKey& x : keys) seen = seen || x == k;
    if (!seen) keys.push_back(k);
  }
  EXPECT_EQ(keys.size(), 9u);
  auto find = [&](int zero, const std::string& order) {
    for (const Candidate& c : group) {
      if (c.strategy.zero == zero && OrderText(c.strategy) == order) return c;
    }
    ADD_FAILURE() << zero << " " << order;
    return group.front();
  };
  const Candidate z1 = find(1, "tp-dp-pp"), z1b = find(1, "dp-tp-pp"), z2 = find(2, "dp-tp-pp"),
                  other = find(1, "tp-pp-dp");
  EXPECT_EQ(TwinKeyOf(z1.strategy, NetDims()), TwinKeyOf(z2.strategy, NetDims()));
  EXPECT_EQ(TwinKeyOf(z1.strategy, NetDims()), TwinKeyOf(z1b.strategy, NetDims()));
  EXPECT_FALSE(TwinKeyOf(z1.strategy, NetDims()) == TwinKeyOf(other.strategy, NetDims()));
  EXPECT_FALSE(TwinKeyOf(z1.strategy, NetDims()) == TwinKeyOf(find(0, "tp-dp-pp").strategy, NetDims()));
  // On a Ring the stride in the dimension counts: tp-dp-pp and dp-tp-pp are not twins.
  std::vector<Dim> ring = NetDims();
  ring[0].block = Block::kRing;
  EXPECT_FALSE(TwinKeyOf(z1.strategy, ring) == TwinKeyOf(z1b.strategy, ring));
  EXPECT_EQ(TwinKeyOf(z1.strategy, ring), TwinKeyOf(find(2, "tp-dp-pp").strategy, ring));

  // The ranking merges them before anything is simulated: the ZeRO-1
  // tp-dp-pp candidate stands for 3 twins, and every survivor is counted once.
  CostModel c{156e12, 2039e9, NetDims(), 4, 10e-9};
  const SearchResult r = SearchStrategies(m, space, c, 100000);
  uint64_t represented = 0;
  const Candidate* rep = nullptr;
  for (const Candidate& x : r.top) {
    represented += 1 + x.twins;
    if (x.index == z1.index) rep = &x;
  }
  EXPECT_EQ(r.top.size(), r.distinct);
  EXPECT_EQ(represented, r.pruned[static_cast<int>(PruneReason::kSurvives)]);
  ASSERT_NE(rep, nullptr);
  EXPECT_EQ(rep->twins, 3u);
  for (const Candidate& x : r.top) EXPECT_NE(x.index, z2.index);  // the twin is not a candidate of its own

  // And the twins do simulate identically (the non-twin is simulated too, for contrast).
  TempDir d;
  d.Write("sys.json", kSystem);
  SimulateOptions so;
  so.system_path = d.File("sys.json");
  so.network = kNet;
  so.stop_when_stable = false;
  const std::vector<Simulated> sims = SimulateCandidates(m, {z1, z1b, z2, other}, so);
  for (const Simulated& s : sims) ASSERT_TRUE(s.done) << s.error;
  EXPECT_EQ(sims[0].iteration_ns, sims[1].iteration_ns);
  EXPECT_EQ(sims[0].iteration_ns, sims[2].iteration_ns);
}

// The search's output counts the twins: the table's twins column and the
// strategies line; --keep-twins ranks each on its own.
TEST(SearchTwins, OutputCountsTwinsAndKeepTwinsTurnsItOff) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("sys.json", kSystem);
  const std::string args = "search --model=" + d.File("tiny.yml") + " --npus=8 --global-batch=16 --network=\"" + kNet +
                           "\" --system=" + d.File("sys.json") + " --top=3 --time-limit=0";
  std::string out, err;
  ASSERT_EQ(RunCliCapture(args, &out, &err), 0) << err;
  EXPECT_NE(out.find(" distinct (twins merged: ZeRO-1/2 and rank orders that run identically); top 3"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" twins      index\n"), std::string::npos) << out;
  std::string kept;
  ASSERT_EQ(RunCliCapture(args + " --keep-twins", &kept, &err), 0) << err;
  // Every survivor distinct: "N survive the pre-filter, N distinct".
  const size_t at = kept.find(" survive the pre-filter, ");
  ASSERT_NE(at, std::string::npos) << kept;
  const size_t from = kept.rfind(", ", at) + 2;
  const std::string survivors = kept.substr(from, at - from);
  EXPECT_NE(kept.find(" survive the pre-filter, " + survivors + " distinct"), std::string::npos) << kept;
}

// A generated data-parallel run on 64 NPUs, every rank simulated: more than
// RunStop::kEventsPerCheck events, so the loop looks at the stop.
Spec DataParallelSpec(const TempDir& d) {
  auto source = GeneratedSource("--model=" + d.File("tiny.yml") + " --dp=64 --microbatches=2");
  EXPECT_TRUE(source.ok()) << source.status().message();
  RunConfig rc;
  rc.source = source.value();
  rc.files.system = d.File("sys.json");
  rc.files.network = "Ring(64,50GB/s,1us)";
  rc.run.symmetry = SymmetryMode::kOff;
  const BackendRegistry backends = DefaultBackends();
  auto spec = ResolveSpec(rc, Registries{&backends});
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.value();
}

TEST(SearchDeadline, StopEndsARunningSimulationWithTheReason) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("sys.json", kSystem);
  const Spec spec = DataParallelSpec(d);
  const BackendRegistry backends = DefaultBackends();
  const Registries reg{&backends};
  auto plain = RunSpec(spec, reg);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_GT(plain->events, RunStop::kEventsPerCheck);
  // An inactive stop, and a deadline far away: the same report, byte for byte.
  RunStop none, far;
  far.has_deadline = true;
  far.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  for (RunStop* stop : {&none, &far}) {
    auto again = RunSpec(spec, reg, nullptr, stop);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(FormatReportText(again.value()), FormatReportText(plain.value()));
    EXPECT_FALSE(stop->stopped);
  }
  // Cancelled once the loop runs: it stops at its first check.
  auto sim = Simulation::Build(spec, reg);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  std::atomic<bool> cancel{true};
  RunStop stop;
  stop.cancel = &cancel;
  const Status st = sim.value()->Run(nullptr, &stop);
  EXPECT_TRUE(stop.stopped);
  EXPECT_EQ(st.exit_code(), 1);
  EXPECT_NE(st.message().find("stopped at the time limit at simulated t="), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(" ns after " + std::to_string(RunStop::kEventsPerCheck) + " events ("), std::string::npos)
      << st.message();
  // A deadline already past, through RunSpec: stopped before building.
  RunStop past;
  past.has_deadline = true;
  past.deadline = std::chrono::steady_clock::now();
  auto r = RunSpec(spec, reg, nullptr, &past);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(past.stopped);
  EXPECT_EQ(r.status().message(), "stopped at the time limit before building the simulation");
}

// The build's part of the stop (run/build.h, StoppableSource): before every
// rank's graph loaded and every rank's peers listed (the rank-class decision
// lists them for every rank). Inactive: the inner source's answers.
TEST(SearchDeadline, StoppableSourceStopsLoadsAndPeerLists) {
  auto w = GenerateDense(testing::TinyModel(4, 32), [] {
    Strategy s;
    s.pp = 2, s.npus = 2, s.microbatches = 2;
    return s;
  }());
  ASSERT_TRUE(w.ok()) << w.status().message();
  const std::shared_ptr<const GraphSource> inner = WorkloadSource(std::move(w.value()), "two stages");
  std::vector<int> expected, peers;
  ASSERT_TRUE(inner->RankPeers(1, &expected));
  ASSERT_FALSE(expected.empty());
  RunStop none;
  const auto open = StoppableSource(inner, &none);
  EXPECT_TRUE(open->Load(1, GraphLoadOptions{}).ok());
  EXPECT_TRUE(open->RankPeers(1, &peers));
  EXPECT_EQ(peers, expected);
  EXPECT_FALSE(none.stopped);
  std::atomic<bool> cancel{true};
  RunStop stop;
  stop.cancel = &cancel;
  const auto shut = StoppableSource(inner, &stop);
  EXPECT_TRUE(shut->RankPeers(1, &peers));
  EXPECT_TRUE(peers.empty());
  EXPECT_TRUE(stop.stopped);
  auto g = shut->Load(1, GraphLoadOptions{});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "stopped at the time limit while building (before loading rank 1's graph)");
}

// The search reports a candidate stopped at the time limit as stopped, not as
// a result; exit 0 (the time limit is what was asked for). Stopped from the
// start, each is stopped in its generation (GenerateDense looks at the stop
// before its first stage).
TEST(SearchDeadline, SearchReportsStoppedCandidates) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("sys.json", kSystem);
  const ModelDesc m = testing::TinyModel(4, 32);
  SearchSpace space;
  space.npus = 8, space.global_batch = 16;
  const SearchResult r = SearchStrategies(m, space, CostModel{156e12, 2039e9, NetDims(), 4, 10e-9}, 3);
  ASSERT_EQ(r.top.size(), 3u);
  SimulateOptions so;
  so.system_path = d.File("sys.json");
  so.network = kNet;
  std::atomic<bool> cancel{true};
  so.cancel = &cancel;
  WinnerStatus w;
  const std::vector<Simulated> sims = SimulateCandidates(m, r.top, so, &w);
  for (const Simulated& s : sims) {
    EXPECT_TRUE(s.stopped);
    EXPECT_FALSE(s.done);
    EXPECT_EQ(s.error, "");
  }
  EXPECT_FALSE(w.stable);
  const std::string text = FormatSearchText(SearchHeader{"tiny", 8, 16, 80, kNet, "sys.json"}, r, sims, w);
  EXPECT_NE(text.find("time limit: 3 stopped at the time limit while simulating (index " +
                      std::to_string(r.top[0].index) + ", " + std::to_string(r.top[1].index) + ", " +
                      std::to_string(r.top[2].index) + "); neither is a result\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("winner: none simulated (--time-limit)"), std::string::npos) << text;
  EXPECT_EQ(FormatSearchCsv(r, sims).find(",stopped,"), FormatSearchCsv(r, sims).find(",stopped,"));
  EXPECT_NE(FormatSearchCsv(r, sims).find(",stopped,"), std::string::npos);
}

// Tiny(2) (s 32, h 64, 4 heads, ffn 256, V 128, GPT-shaped): 49,984
// parameters per layer, embeddings (128 + 32)·64 = 10,240, final norm 128.
// dp 4 × tp 2 on Ring(2, 1 GiB/s) × Switch(4, 0.5 GiB/s), order dp-tp: dp's
// ranks {0,1,2,3} span both dimensions (2 on each), tp's {0,4} dimension 1.
// ASTRA-sim's model runs the dp group (4 of 8 NPUs) as one flat ring whose
// every message changes dimension 0 and is charged there (1 GiB/s); the
// hierarchical model runs it per dimension (a flat ring charged on its
// slowest dimension, 0.5 GiB/s, when dimension 1 is a Ring). Gradients:
// (2·49,984 + 10,240 + 128) / tp 2 = 55,168 parameters = 110,336 B,
// all-reduced over 4: 2·(3/4)·110,336 = 165,504 B, exposed (compute 10^-30).
TEST(SearchCost, AstraSimGroupIsChargedOnItsLowestDimensionByHand) {
  const ModelDesc m = testing::TinyModel(2, 32);
  Strategy s;
  s.tp = 2, s.dp = 4, s.npus = 8, s.microbatches = 1;
  s.order = {Axis::kDp, Axis::kTp, Axis::kCp, Axis::kEp, Axis::kPp};
  ASSERT_TRUE(ValidateStrategy(m, s).ok());
  CostModel c{1e30, 0, {Dim{Block::kRing, 2, 1.0, 0, 1}, Dim{Block::kSwitch, 4, 0.5, 0, 1}}};
  const double gib = 1073741824.0;
  EXPECT_NEAR(EstimateCost(m, s, c).dp_s, 165504 / gib, 1e-15);
  c.hierarchical_groups = true;
  // The hierarchical model runs a grid over several dimensions per dimension
  // when its partial ones are switches: dp's group is both NPUs of dimension 0
  // and 2 of dimension 1's 4. Dimension 0 all-reduces 2·(1/2)·110,336 B at
  // 1 GiB/s, dimension 1 its half, 2·(1/2)·55,168 B at 0.5 GiB/s.
  EXPECT_NEAR(EstimateCost(m, s, c).dp_s, 110336 / gib + 2 * 55168 / gib, 1e-15);
  // On a Ring dimension 1's two members are not at the same distance from
  // every other position: one flat ring, charged on the slowest dimension.
  c.dims[1].block = Block::kRing;
  EXPECT_NEAR(EstimateCost(m, s, c).dp_s, 2 * 165504 / gib, 1e-15);
  c.dims[1].block = Block::kSwitch;
  // The whole network as one group (dp 8, tp 1) is not a flat ring: one phase per dimension,
  // lowest first, either way. (2·49,984 + 10,240 + 128) = 110,336 parameters = 220,672 B:
  // dimension 0 (2 NPUs) all-reduces 2·(1/2)·220,672 = 220,672 B at 1 GiB/s, dimension 1
  // (4 NPUs) its half, 2·(3/4)·110,336 = 165,504 B at 0.5 GiB/s.
  s.tp = 1, s.dp = 8;
  for (bool hierarchical : {false, true}) {
    c.hierarchical_groups = hierarchical;
    EXPECT_NEAR(EstimateCost(m, s, c).dp_s, 220672 / gib + 2 * 165504 / gib, 1e-15) << hierarchical;
  }
  c.hierarchical_groups = false;
  // In 2 chunks the phases pipeline: a chunk's phases take 220,672/2 B at 1 GiB/s and
  // 165,504/2 B at 0.5 GiB/s; the second chunk follows one slowest phase behind the first.
  c.splits = 2;
  EXPECT_NEAR(EstimateCost(m, s, c).dp_s, 110336 / gib + 2 * 165504 / gib, 1e-15);
  c.splits = 1;
  // Point-to-point messages are charged on the lowest dimension they cross,
  // whatever the group: pp 8 over both dimensions, one activation in and one
  // gradient back of b·s·h·2 = 4,096 B per microbatch at 1 GiB/s (the
  // hierarchical model: the slowest, 0.5 GiB/s).
  const ModelDesc m8 = testing::TinyModel(8, 32);
  Strategy p;
  p.pp = 8, p.npus = 8, p.microbatches = 1;
  ASSERT_TRUE(ValidateStrategy(m8, p).ok());
  EXPECT_NEAR(EstimateCost(m8, p, c).pp_s, 2 * 4096 / gib, 1e-15);
  c.hierarchical_groups = true;
  EXPECT_NEAR(EstimateCost(m8, p, c).pp_s, 2 * 2 * 4096 / gib, 1e-15);
}

// ZeRO-3 on dp 2 × pp 2, Ring(2, 1 GiB/s) × Ring(2, 1 GiB/s), 4 layers, m 2,
// compute at 10^9 FLOP/s (a layer's forward, 3,407,872 FLOPs, takes 3.4 ms,
// far more than a gather): only the first gather of each model chunk's
// forward and backward is exposed. The cost reports the slowest stage, the
// last (it adds the logits): 2 layers (2·49,984), the untied output copy
// (128·64 = 8,192) and the final norm (128): P = 108,288 parameters, 2P
// bytes, P bytes per layer; a gather over 2 moves half of it, P/2 = 54,144
// B. 1F1B: m·(1 + 1)·P/2 B; interleaved:2 (V 2: layers 1 and 3 on stage 1,
// the same bytes): twice that.
TEST(SearchCost, ZeroThreeExposesTheFirstGatherOfEachChunkByHand) {
  const ModelDesc m = testing::TinyModel(4, 32);
  Strategy s;
  s.dp = 2, s.pp = 2, s.npus = 4, s.microbatches = 2, s.zero = 3;
  s.order = {Axis::kDp, Axis::kPp, Axis::kTp, Axis::kCp, Axis::kEp};
  ASSERT_TRUE(ValidateStrategy(m, s).ok());
  const CostModel c{1e9, 0, {Dim{Block::kRing, 2, 1.0, 0, 1}, Dim{Block::kRing, 2, 1.0, 0, 1}}};
  const double gib = 1073741824.0;
  ASSERT_EQ(RankParamsSplit(m, s, 1).dense, 108288u);
  const double half = 54144;
  EXPECT_NEAR(EstimateCost(m, s, c).zero3_s, 2 * 2 * half / gib, 1e-12);
  s.schedule = Schedule::kInterleaved, s.chunks = 2;
  ASSERT_TRUE(ValidateStrategy(m, s).ok());
  EXPECT_EQ(RankParamsSplit(m, s, 1).dense, 108288u);
  EXPECT_NEAR(EstimateCost(m, s, c).zero3_s, 2 * 2 * 2 * half / gib, 1e-12);
}

// The lower bound on pp 2, 2 layers, m 2, 1F1B, no network cost, 10^12
// FLOP/s: per microbatch a layer is 3·3,407,872 = 10,223,616 FLOPs
// (forward + backward), the logits 3·524,288 = 1,572,864. The last stage:
// m·(10,223,616 + 1,572,864) = 23,592,960, plus the first stage's layer on
// the way in and out (p−1 = 1 stage of ⌊2/2⌋ = 1 layer): 10,223,616;
// 33,816,576 FLOPs = 33.816576 us, less 1 ns for every node the bound
// counts (the simulation truncates each to whole ns): m·(1 layer · 2 passes
// · 2 nodes + 2 logits) + 1 layer · 2 passes · 2 nodes = 16 ns, and a
// relative 10^-12 (the double arithmetic). On one NPU: the whole compute less
// 2 layers · 2 passes · 2 nodes + 2 logits = 10 ns.
TEST(SearchCost, LowerBoundByHand) {
  const ModelDesc m = testing::TinyModel(2, 32);
  Strategy s;
  s.pp = 2, s.npus = 2, s.microbatches = 2;
  ASSERT_TRUE(ValidateStrategy(m, s).ok());
  const CostModel c{1e12, 0, {Dim{Block::kRing, 2, 1e9, 0, 1}}};
  const SymbolicCost cost = EstimateCost(m, s, c);
  EXPECT_NEAR(cost.lower_s, (33.816576e-6 - 16e-9) * (1 - 1e-12), 1e-15);
  EXPECT_LE(cost.lower_s, cost.total_s);
  Strategy one;
  one.npus = 1;
  const SymbolicCost alone = EstimateCost(m, one, CostModel{1e12, 0, {}});
  EXPECT_NEAR(alone.lower_s, (22.020096e-6 - 10e-9) * (1 - 1e-12), 1e-15);
  EXPECT_NEAR(alone.total_s, 22.020096e-6, 1e-15);

  // Ring attention, cp 2 on Ring(2, 1 GiB/s), compute free (10^30 FLOP/s):
  // each layer's forward waits for one K/V block of 2·(b·s/cp)·kv·2 =
  // 2·16·64·2 = 4,096 B and its backward for 8,192 B: 2 layers, m 1:
  // 24,576 B at 2^30 B/s, less 1 ns for each of 2 layers · 2 passes · (cp +
  // 2 attention nodes + 1 MLP node) + 2 logits = 22 nodes and 2 layers · 2
  // passes · (cp − 1) = 4 messages.
  Strategy cp;
  cp.cp = 2, cp.npus = 2;
  ASSERT_TRUE(ValidateStrategy(m, cp).ok());
  const SymbolicCost ring = EstimateCost(m, cp, CostModel{1e30, 0, {Dim{Block::kRing, 2, 1.0, 0, 1}}});
  EXPECT_NEAR(ring.lower_s, (24576 / 1073741824.0 - 26e-9) * (1 - 1e-12), 1e-15);
}

Simulated Done(Tick ns) {
  Simulated s;
  s.done = true;
  s.iteration_ns = ns;
  return s;
}

// The stop rule on synthetic lists (seconds; simulated times in ns).
TEST(SearchStable, StopRuleOnSyntheticLists) {
  const double inf = std::numeric_limits<double>::infinity();
  // Lower bounds 1, 2, 3, 4 s; the first simulates in 2.5 s: candidates 1
  // (lower 2) could still beat it, 2 and 3 (3, 4) cannot: stable after 2
  // when the second takes 2.2 s (best 2.2 ≤ 3).
  const std::vector<double> lower{1, 2, 3, 4};
  std::vector<Simulated> sims{Done(2'500'000'000), Done(2'200'000'000), Done(3'100'000'000), Done(4'000'000'000)};
  EXPECT_EQ(StablePrefix(lower, inf, sims), 2u);
  EXPECT_FALSE(StableAfter(lower, inf, sims, 1));
  EXPECT_TRUE(StableAfter(lower, inf, sims, 2));
  // A survivor outside the list with a lower bound of 2 s keeps it open to the end.
  EXPECT_EQ(StablePrefix(lower, 2.0, sims), 4u);
  EXPECT_FALSE(StableAfter(lower, 2.0, sims, 4));
  // Equal to the bound is stable (nothing left can be faster).
  EXPECT_EQ(StablePrefix({1, 3}, inf, {Done(3'000'000'000), Done(5'000'000'000)}), 1u);
  // Lower bounds out of order: the least of the rest counts, not the next one.
  EXPECT_EQ(StablePrefix({1, 5, 2, 6}, inf,
                         {Done(3'000'000'000), Done(6'000'000'000), Done(2'500'000'000), Done(7'000'000'000)}),
            3u);
  // A failed candidate cannot win and stops counting; one stopped at the time
  // limit (or never started) still could.
  Simulated failed, stopped;
  failed.error = "bad";
  stopped.stopped = true;
  EXPECT_EQ(StablePrefix({1, 1, 4}, inf, {Done(3'000'000'000), failed, Done(5'000'000'000)}), 2u);
  EXPECT_EQ(StablePrefix({1, 1, 4}, inf, {Done(3'000'000'000), stopped, Done(5'000'000'000)}), 3u);
  EXPECT_FALSE(StableAfter({1, 1, 4}, inf, {Done(3'000'000'000), stopped, Done(5'000'000'000)}, 3));
  // The running set: while candidate 1 runs, its lower bound keeps the winner open.
  StableWinner w({1, 2, 9}, inf);
  w.Start();
  w.Start();
  w.Finish(0, true, false, 3.0);
  EXPECT_FALSE(w.Stable());
  EXPECT_EQ(w.OpenLower(), 2.0);
  w.Finish(1, true, false, 4.0);
  EXPECT_TRUE(w.Stable());
  EXPECT_EQ(w.best_s(), 3.0);
}

// End to end on one NPU, compute-bound (10 GFLOP/s): 4 microbatch sizes ×
// 2 schedules × 3 recomputation modes = 24 candidates, no communication, so
// each simulates in its compute (less the ns the simulation truncates) and
// its lower bound is that compute less 1 ns per node: m·(4 layers · 2
// passes · 2 nodes + 2 logits) = 18·m ns. The 8 without recomputation have
// the same FLOPs, 8 sequences · (4 · 3 · 3,407,872 + 3 · 524,288) =
// 339,738,624 = 33,973,862.4 ns; their bounds, by b (m = 8/b): b 1
// 33,973,718.4, b 2 ...790.4, b 4 ...826.4, b 8 ...844.4 ns. b 1 simulates
// in 33,973,832 ns (the ns truncated; found by simulation), below b 4's bound
// but not b 8's: after b 1, 2 and 4 (two schedules each, 6 candidates) the
// winner is stable; selective adds the attention cores (far more than the
// ns of slack), and the 18 others are not simulated. The same output with 1
// and 2 jobs (the second job's runs past the 6th are dropped).
TEST(SearchStable, OneNpuStopsOnceNoCandidateLeftCanWin) {
  TempDir d;
  d.Write("tiny.yml", kTinyYaml);
  d.Write("slow.json", R"({"roofline-enabled": 1, "peak-perf": 0.01, "local-mem-bw": 2039,
                           "preferred-dataset-splits": 4})");
  const std::string args = "search --model=" + d.File("tiny.yml") +
                           " --npus=1 --global-batch=8 --network=\"Switch(1,300GB/s,500ns)\" --system=" +
                           d.File("slow.json") + " --top=30";
  std::string out1, out2, err;
  ASSERT_EQ(RunCliCapture(args + " --jobs=1", &out1, &err), 0) << err;
  ASSERT_EQ(RunCliCapture(args + " --jobs=2", &out2, &err), 0) << err;
  EXPECT_EQ(out1, out2);
  EXPECT_NE(out1.find("24 distinct (twins merged: ZeRO-1/2 and rank orders that run identically); top 24 by lower "
                      "bound (branch and bound: simulated in that order until the winner is stable), 6 of them "
                      "simulated\n"),
            std::string::npos)
      << out1;
  EXPECT_NE(out1.find("stable winner: yes, after the first 6 of 24 candidates: its simulated "), std::string::npos)
      << out1;
  EXPECT_NE(out1.find(" ms is at most the lower bound of every distinct survivor not simulated (18 not simulated)\n"),
            std::string::npos)
      << out1;
  EXPECT_NE(err.find("orrery search: the winner was stable "), std::string::npos) << err;
  // --simulate=all: every one of the 24, in symbolic order.
  std::string all;
  ASSERT_EQ(RunCliCapture(args + " --simulate=all", &all, &err), 0) << err;
  EXPECT_NE(all.find("top 24 by symbolic cost, 24 of them simulated"), std::string::npos) << all;
}

}  // namespace
}  // namespace orrery::gen
