// Generated pipelines simulated end to end: the bubble comes out of the
// dependencies and matches (p−1)/(m+p−1) to the nanosecond.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "gen/strategy.h"
#include "gen/summary.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

using orrery::testing::TempDir;

ModelDesc Tiny(int64_t layers) { return testing::TinyModel(layers, 16); }

Tick NodeNs(uint64_t ops) { return testing::RooflineNs(ops); }

Result<RunReport> Simulate(const Workload& w, const TempDir& d, double bw_gbps = 1e9, double latency_ns = 0) {
  return testing::SimulateOnRing(w, d, bw_gbps, latency_ns);
}

// Forward and backward time of one microbatch on one stage of `layers` layers
// of Tiny (b = 1, t = 1): attention and MLP blocks, backward twice the FLOPs.
struct StageTimes {
  Tick fwd = 0, bwd = 0;
};
StageTimes TinyStage(const ModelDesc& m, int64_t layers) {
  const uint64_t s = m.seq_len, h = m.hidden, f = m.ffn;
  const uint64_t attn = 2 * s * h * 3 * h + 2 * s * h * h + 4 * s * s * h;  // QKV, projection, scores + context
  const uint64_t mlp = 2 * s * h * f * 2;
  StageTimes t;
  t.fwd = layers * (NodeNs(attn) + NodeNs(mlp));
  t.bwd = layers * (NodeNs(2 * attn) + NodeNs(2 * mlp));
  return t;
}

class PipelineBubble : public ::testing::TestWithParam<std::tuple<Schedule, int64_t, int64_t>> {};

TEST_P(PipelineBubble, IterationIsMPlusPMinusOneSlots) {
  const auto [schedule, p, m] = GetParam();
  const ModelDesc model = Tiny(p);
  Strategy s;
  s.pp = p;
  s.microbatches = m;
  s.schedule = schedule;
  s.lm_head = false;  // identical stages
  auto w = GenerateDense(model, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  TempDir d;
  auto r = Simulate(w.value(), d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const StageTimes t = TinyStage(model, 1);
  const Tick iteration = orrery::testing::MaxFinished(r.value());
  EXPECT_EQ(iteration, static_cast<Tick>(m + p - 1) * (t.fwd + t.bwd));
  // Bubble = (T − m·(F+B)) / T = (p−1)/(m+p−1), compared as integers.
  const Tick bubble = iteration - static_cast<Tick>(m) * (t.fwd + t.bwd);
  EXPECT_EQ(bubble * static_cast<Tick>(m + p - 1), static_cast<Tick>(p - 1) * iteration);
  // Every stage computes m·(F+B).
  for (const auto& n : r.value().per_npu) EXPECT_EQ(n.compute_ns, static_cast<Tick>(m) * (t.fwd + t.bwd));
}

INSTANTIATE_TEST_SUITE_P(Schedules, PipelineBubble,
                         ::testing::Values(std::make_tuple(Schedule::k1F1B, 4, 8),
                                           std::make_tuple(Schedule::k1F1B, 4, 2),
                                           std::make_tuple(Schedule::k1F1B, 2, 5),
                                           std::make_tuple(Schedule::kGpipe, 4, 8),
                                           std::make_tuple(Schedule::kGpipe, 3, 1)));

// Ring closed forms of tests/closed_form_test.cc for one chunk (splits 1),
// endpoint delay 0, reduction free (local-mem-bw huge): p−1 steps per phase.
struct Ring {
  int p;
  double bw_gbps, lat_ns;
  Tick Step(double bytes) const { return static_cast<Tick>(lat_ns + bytes / GiBpsToBytesPerNs(bw_gbps)); }
  Tick AllReduce(uint64_t bytes) const { return 2 * (p - 1) * Step(static_cast<double>(bytes / p)); }
  Tick ReduceScatter(uint64_t bytes) const { return (p - 1) * Step(static_cast<double>(bytes / p)); }
  Tick AllGather(uint64_t shard) const { return (p - 1) * Step(static_cast<double>(shard)); }
};

// One layer, one microbatch, with the output layer: six compute blocks in a chain.
Tick ChainCompute(const ModelDesc& m, uint64_t t) {
  const uint64_t s = m.seq_len, h = m.hidden, f = m.ffn, V = m.vocab;
  const uint64_t attn = (2 * s * h * 3 * h + 2 * s * h * h + 4 * s * s * h) / t, mlp = 2 * s * h * f * 2 / t;
  const uint64_t logits = 2 * s * h * V / t;
  return NodeNs(attn) + NodeNs(mlp) + NodeNs(logits) + NodeNs(2 * logits) + NodeNs(2 * mlp) + NodeNs(2 * attn);
}

TEST(GenSimulated, TensorParallelIsComputePlusFourAllReducesPerLayer) {
  const ModelDesc m = Tiny(1);
  Strategy s;
  s.tp = 2;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok());
  TempDir d;
  const Ring ring{2, 50, 500};
  auto r = Simulate(w.value(), d, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t act = 16 * 64 * 2;  // s·h·2 bytes
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), ChainCompute(m, 2) + 4 * ring.AllReduce(act));
  // With SP each all-reduce becomes an all-gather of the s·h·2/t shard and a reduce-scatter.
  s.sp = true;
  auto w2 = GenerateDense(m, s);
  TempDir d2;
  auto r2 = Simulate(w2.value(), d2, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(orrery::testing::MaxFinished(r2.value()),
            ChainCompute(m, 2) + 4 * (ring.AllGather(act / 2) + ring.ReduceScatter(act)));
}

TEST(GenSimulated, DataParallelGradientsAfterBackward) {
  const ModelDesc m = Tiny(1);
  Strategy s;
  s.dp = 2;
  s.bucket_bytes = 1ull << 40;  // one bucket, reduced when the backward pass is done
  const Ring ring{2, 50, 500};
  const uint64_t grads = 2 * static_cast<uint64_t>(ParamCount(m) - 2 * 64);  // all but the final norm
  for (int zero : {0, 2}) {
    s.zero = zero;
    auto w = GenerateDense(m, s);
    ASSERT_TRUE(w.ok());
    TempDir d;
    auto r = Simulate(w.value(), d, ring.bw_gbps, ring.lat_ns);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const Tick comm = zero == 0 ? ring.AllReduce(grads) : ring.ReduceScatter(grads) + ring.AllGather(grads / 2);
    EXPECT_EQ(orrery::testing::MaxFinished(r.value()), ChainCompute(m, 1) + comm) << "ZeRO-" << zero;
  }
}

// ZeRO-3 on two layers, one microbatch, two DP ranks: each layer's
// parameters are all-gathered before its forward and its backward; the gather
// of the next layer is issued when a layer starts (one layer of prefetch), so
// it overlaps that layer's compute. Forward: G0, then layer 0 while G1 runs;
// layer 1 starts at max(G + L, 2G). Backward: G1 after the output layer, then
// layer 1 while G0 runs; layer 0 at max(Lb, G) after that. Then the gradients'
// reduce-scatter.
TEST(GenSimulated, ZeroThreeGathersEachLayerWithOneLayerOfPrefetch) {
  const ModelDesc m = Tiny(2);
  Strategy s;
  s.dp = 2;
  s.zero = 3;
  s.bucket_bytes = 1ull << 40;
  const Ring ring{2, 50, 500};
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok());
  TempDir d;
  auto r = Simulate(w.value(), d, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t sq = m.seq_len, h = m.hidden, V = m.vocab;
  const uint64_t attn = 2 * sq * h * 3 * h + 2 * sq * h * h + 4 * sq * sq * h, mlp = 2 * sq * h * m.ffn * 2;
  const Tick L = NodeNs(attn) + NodeNs(mlp), Lb = NodeNs(2 * attn) + NodeNs(2 * mlp);
  const Tick logits = NodeNs(2 * sq * h * V) + NodeNs(2 * 2 * sq * h * V);
  // A layer's shard: 2 bytes per parameter over 2 ranks (attention 16,640, MLP 33,088, norms 256).
  const uint64_t layer_shard = 2 * uint64_t{16640 + 33088 + 256} / 2;
  const Tick G = ring.AllGather(layer_shard);
  const uint64_t grads = 2 * (2 * uint64_t{16640 + 33088 + 256} + (V + sq) * h);  // all but the final norm
  const Tick fwd = std::max(G + L, 2 * G) + L;
  const Tick bwd = G + std::max(Lb, G) + Lb;
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), fwd + logits + bwd + ring.ReduceScatter(grads));
}

TEST(GenSimulated, RecomputationAddsForwardWork) {
  const ModelDesc m = Tiny(1);
  const uint64_t s = m.seq_len, h = m.hidden;
  const uint64_t attn = 2 * s * h * 3 * h + 2 * s * h * h + 4 * s * s * h, mlp = 2 * s * h * m.ffn * 2;
  // Two DP ranks (a network dimension needs two NPUs): one gradient all-reduce at the end.
  const Ring ring{2, 50, 500};
  const Tick ar = ring.AllReduce(2 * static_cast<uint64_t>(ParamCount(m) - 2 * 64));
  Strategy st;
  st.dp = 2;
  st.bucket_bytes = 1ull << 40;
  st.recompute = Recompute::kFull;  // one more forward of the layer (not the output layer)
  auto w = GenerateDense(m, st);
  TempDir d;
  auto r = Simulate(w.value(), d, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), ChainCompute(m, 1) + NodeNs(attn) + NodeNs(mlp) + ar);
  st.recompute = Recompute::kSelective;  // the backward attention node recomputes QKᵀ and attention over V
  auto w2 = GenerateDense(m, st);
  TempDir d2;
  auto r2 = Simulate(w2.value(), d2, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(orrery::testing::MaxFinished(r2.value()),
            ChainCompute(m, 1) - NodeNs(2 * attn) + NodeNs(2 * attn + 4 * s * s * h) + ar);
}

// Interleaved 1F1B with v chunks of one layer each: the bubble shrinks v-fold,
// iteration = m·v·(F+B) + (p−1)·(F+B) with F, B of one chunk.
class InterleavedBubble : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(InterleavedBubble, BubbleIsPMinusOneChunkSlots) {
  const auto [p, v, m] = GetParam();
  const ModelDesc model = Tiny(p * v);
  Strategy s;
  s.pp = p;
  s.chunks = v;
  s.microbatches = m;
  s.schedule = Schedule::kInterleaved;
  s.lm_head = false;
  auto w = GenerateDense(model, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  TempDir d;
  auto r = Simulate(w.value(), d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const StageTimes t = TinyStage(model, 1);
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), static_cast<Tick>(m * v + p - 1) * (t.fwd + t.bwd));
  for (const auto& n : r.value().per_npu) EXPECT_EQ(n.compute_ns, static_cast<Tick>(m * v) * (t.fwd + t.bwd));
}

INSTANTIATE_TEST_SUITE_P(Chunks, InterleavedBubble,
                         ::testing::Values(std::make_tuple(2, 2, 4), std::make_tuple(4, 2, 8),
                                           std::make_tuple(4, 3, 4)));

}  // namespace
}  // namespace orrery::gen
