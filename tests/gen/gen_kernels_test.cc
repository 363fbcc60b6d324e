// The kernel model (gen/kernels.h) against closed forms, the work outside the
// layers it adds to a generated iteration, and the roofline's per-node
// efficiencies in the executor.
#include <gtest/gtest.h>

#include <string>

#include "gen/gen_args.h"
#include "gen/kernels.h"
#include "gen/strategy.h"
#include "gen/summary.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

using orrery::testing::MakeNode;
using orrery::testing::SetAttr;
using orrery::testing::TempDir;

// A toy device: 4 SMs, 2×2 tiles, large GEMMs at half of peak.
DeviceModel Toy() { return DeviceModel{4, 2, 2, 0.5, 0.8, 0.4, 0.3, {}, 0, {}, {}, 0}; }

TEST(GenKernels, GemmEfficiencyQuantisesTilesAndWaves) {
  // 4×4: 4 tiles, one full wave: 0.5.
  EXPECT_DOUBLE_EQ(GemmEfficiency(Toy(), 4, 4, 7), 0.5);
  // 5×4: ceil(5/2)·2 = 6 tiles, 2 waves of 4 slots of 2×2: 20 / 32 of the slots are work.
  EXPECT_DOUBLE_EQ(GemmEfficiency(Toy(), 5, 4, 7), 0.5 * 20.0 / 32.0);
  // Batched: 3 GEMMs of 2×2 are 3 tiles in one wave of 4: 12 / 16.
  EXPECT_DOUBLE_EQ(GemmEfficiency(Toy(), 2, 2, 7, 3), 0.5 * 12.0 / 16.0);
  // A 4×2 tile is tried both ways round: 4×8 fits 4 tiles of 4×2 exactly (2×4 would too).
  DeviceModel d = Toy();
  d.tile_m = 4;
  d.tile_n = 2;
  EXPECT_DOUBLE_EQ(GemmEfficiency(d, 8, 4, 1), 0.5);                 // 2·2 tiles of 4×2 (or 4·1 of 2×4)
  EXPECT_DOUBLE_EQ(GemmEfficiency(d, 2, 16, 1), 0.5 * 32.0 / 32.0);  // 1·4 tiles of 2×4 are one full wave
}

// The depth term K / (K + overhead), K held at 512 or more.
TEST(GenKernels, GemmEfficiencyLosesAFixedDepthPerTile) {
  DeviceModel d = Toy();
  d.gemm_k_overhead = 512;
  EXPECT_DOUBLE_EQ(GemmEfficiency(d, 4, 4, 512), 0.5 * 512 / 1024);
  EXPECT_DOUBLE_EQ(GemmEfficiency(d, 4, 4, 1536), 0.5 * 1536 / 2048);
  EXPECT_DOUBLE_EQ(GemmEfficiency(d, 4, 4, 64), 0.5 * 512 / 1024);  // below the measured range: held at 512
  EXPECT_DOUBLE_EQ(GemmEfficiency(d, 5, 4, 1536), 0.5 * 20.0 / 32.0 * 1536 / 2048);  // with the waves'
  // The A100 preset: 64×64 tiles, overhead 110. M 8,192, N 2,304, K 6,144 (the 22B layer's QKV at TP 8):
  // 128·36 = 4,608 tiles in 43 waves of 108: 4,608 / 4,644 of the slots.
  auto a100 = FindDevice("a100");
  ASSERT_TRUE(a100.ok());
  EXPECT_NEAR(GemmEfficiency(a100->model, 8192, 2304, 6144), 0.822 * 4608.0 / 4644.0 * 6144 / 6254, 1e-12);
}

TEST(GenKernels, GemmFlopsAndBytes) {
  const Kernel k = GemmKernel("x", Toy(), 6, 10, 3);
  EXPECT_EQ(k.flops, 2u * 6 * 10 * 3);
  EXPECT_EQ(k.bytes, (6u * 3 + 3 * 10 + 6 * 10) * 2);
  EXPECT_FLOAT_EQ(k.memory_efficiency, 0.8F);
  const Kernel b = GemmBackwardKernel("x", Toy(), 6, 10, 3);
  EXPECT_EQ(b.flops, 2 * k.flops);
  EXPECT_EQ(b.bytes, 2 * k.bytes);
  // dX (6×3, from 6×10 by 10×3) and dW (3×10): harmonic mean of their efficiencies.
  const double ex = GemmEfficiency(Toy(), 6, 3, 10), ew = GemmEfficiency(Toy(), 3, 10, 6);
  EXPECT_FLOAT_EQ(b.compute_efficiency, static_cast<float>(2 / (1 / ex + 1 / ew)));
}

LayerShape GptLayer(uint64_t b, uint64_t s, uint64_t h, uint64_t a, uint64_t t, bool sp) {
  LayerShape l;
  l.b = b;
  l.s = s;
  l.h = h;
  l.q = h;
  l.kv = h;
  l.d = h / a;
  l.f = 4 * h;
  l.t = t;
  l.sp = sp;
  return l;
}

uint64_t Sum(const std::vector<Kernel>& ks, bool gemms, bool flops) {
  uint64_t total = 0;
  for (const Kernel& k : ks) {
    const bool is_gemm = k.compute_efficiency != 1;
    if (is_gemm == gemms) total += flops ? k.flops : k.bytes;
  }
  return total;
}

const Kernel& Named(const std::vector<Kernel>& ks, const std::string& name) {
  for (const Kernel& k : ks) {
    if (name == k.name) return k;
  }
  static const Kernel none{"none"};
  return none;
}

TEST(GenKernels, GptLayerMatchesKorthikanti) {
  // b 2, s 64, h 128, a 8 (d 16), t 4.
  const uint64_t b = 2, s = 64, h = 128, a = 8, t = 4;
  for (bool sp : {false, true}) {
    const LayerShape l = GptLayer(b, s, h, a, t, sp);
    const BlockKernels af = AttentionForward(Toy(), l), mf = MlpForward(Toy(), l);
    // Korthikanti et al. 2022 App. A: attention 8bsh² + 4bs²h, MLP 16bsh², split by t.
    EXPECT_EQ(Sum(af.body, true, true), (8 * b * s * h * h + 4 * b * s * s * h) / t);
    EXPECT_EQ(Sum(mf.body, true, true), 16 * b * s * h * h / t);
    const BlockKernels ab = AttentionBackward(Toy(), l), mb = MlpBackward(Toy(), l);
    EXPECT_EQ(Sum(ab.body, true, true), 2 * (8 * b * s * h * h + 4 * b * s * s * h) / t);
    EXPECT_EQ(Sum(mb.body, true, true), 2 * 16 * b * s * h * h / t);
    // Softmax reads and writes the rank's a/t probability maps (2 B each); dropout
    // reads them and writes its output and a 1-byte mask: the 5as²b of Table 2.
    EXPECT_EQ(Named(af.body, "softmax").bytes, 4 * b * (a / t) * s * s);
    EXPECT_EQ(Named(af.body, "dropout").bytes, 5 * b * (a / t) * s * s);
    // LayerNorm reads and writes b·s·h values; with SP only the rank's 1/t of the sequence.
    const uint64_t e = sp ? b * s * h / t : b * s * h;
    EXPECT_EQ(Named(af.pre, "ln").bytes, 4 * e);
    EXPECT_EQ(Named(af.post, "bda").bytes, 2 * 2 * e + 3 * e);  // x and residual in; out and mask
    // bias + GeLU: 4h/t per token in and out.
    EXPECT_EQ(Named(mf.body, "act").bytes, 2 * 2 * b * s * 4 * h / t);
    // Selective recomputation: the core again, 4bs²h/t.
    EXPECT_EQ(Sum(AttentionCoreRecompute(Toy(), l), true, true), 4 * b * s * s * h / t);
    // Backward, by hand: the row-parallel bias's gradient sums the rank's e gradient values into h
    // (2 B each); QKV's sums b·s·3h/t into 3h/t, FC1's b·s·4h/t into 4h/t (SP or not: the GEMM's
    // own tokens); the residual's two gradients are added (2e in, e out).
    EXPECT_EQ(Named(ab.pre, "bias_grad").bytes, 2 * e + 2 * h);
    EXPECT_EQ(Named(mb.pre, "bias_grad").bytes, 2 * e + 2 * h);
    EXPECT_EQ(Named(ab.post, "qkv_bias_grad").bytes, 2 * b * s * 3 * h / t + 2 * 3 * h / t);
    EXPECT_EQ(Named(mb.post, "fc1_bias_grad").bytes, 2 * b * s * 4 * h / t + 2 * 4 * h / t);
    EXPECT_EQ(Named(ab.post, "residual").bytes, 3 * 2 * e);
    EXPECT_EQ(Named(mb.post, "residual").bytes, 3 * 2 * e);
    // --tp-overlap's halves of QKV's backward: the data gradient (b·s × h, depth 3h/t), the weight
    // gradient (h × 3h/t, depth b·s); their FLOPs are the backward's 2 · 2·b·s·h·3h/t.
    ASSERT_EQ(ab.last_split.size(), 2u);
    EXPECT_EQ(ab.last_split[0].flops + ab.last_split[1].flops, 2 * 2 * b * s * h * 3 * h / t);
    EXPECT_EQ(ab.last_split[0].bytes, 2 * (b * s * 3 * h / t + 3 * h / t * h + b * s * h));
  }
  // Without biases (Llama) there is no bias gradient; the residual's stays.
  LayerShape plain = GptLayer(b, s, h, a, t, false);
  plain.biases = false;
  const BlockKernels ab = AttentionBackward(Toy(), plain);
  for (const auto* part : {&ab.pre, &ab.post}) {
    for (const Kernel& k : *part) EXPECT_EQ(std::string(k.name).find("bias_grad"), std::string::npos) << k.name;
  }
  EXPECT_EQ(Named(ab.post, "residual").bytes, 3 * 2 * b * s * h);
}

TEST(GenKernels, FlashAttentionFusesTheCore) {
  LayerShape l = GptLayer(1, 64, 128, 8, 2, false);
  l.flash = true;
  const BlockKernels f = AttentionForward(Toy(), l);
  EXPECT_EQ(Named(f.body, "softmax").name, std::string("none"));
  const Kernel& k = Named(f.body, "flash");
  // Causal: half of the 4bs²h/t core; Q, K, V in and O out, no s² tensor.
  EXPECT_EQ(k.flops, 2u * 64 * 64 * 128 / 2);
  EXPECT_EQ(k.bytes, 64u * 4 * 128 / 2 * 2);
  EXPECT_FLOAT_EQ(k.compute_efficiency, 0.4F);
  EXPECT_TRUE(AttentionCoreRecompute(Toy(), l).empty());
}

// The attention core's measured bandwidth by sequence length: linear in log s
// between two points, the nearest point outside them, memory_efficiency without any.
TEST(GenKernels, AttentionEfficiencyInterpolatesInLogSequence) {
  DeviceModel d = Toy();
  EXPECT_DOUBLE_EQ(AttentionEfficiency(d, 64, false), 0.8);
  EXPECT_DOUBLE_EQ(AttentionEfficiency(d, 64, true), 0.8);
  d.attention = {{100, 0.2, 0.1}, {400, 0.6, 0.5}};
  EXPECT_DOUBLE_EQ(AttentionEfficiency(d, 50, false), 0.2);
  EXPECT_DOUBLE_EQ(AttentionEfficiency(d, 100, true), 0.1);
  // 200 is half way from 100 to 400 in log s.
  EXPECT_NEAR(AttentionEfficiency(d, 200, false), 0.4, 1e-12);
  EXPECT_NEAR(AttentionEfficiency(d, 200, true), 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(AttentionEfficiency(d, 400, false), 0.6);
  EXPECT_DOUBLE_EQ(AttentionEfficiency(d, 4000, true), 0.5);
}

// The unfused core's kernels (scores, softmax, av; forward, backward and the
// selective replay) run at the core's efficiency for their sequence length,
// the forward dropout at its own, everything else at memory_efficiency.
TEST(GenKernels, AttentionCoreKernelsUseTheirMeasuredBandwidth) {
  DeviceModel d = Toy();
  d.attention = {{32, 0.3, 0.2}, {128, 0.5, 0.4}};
  d.attention_dropout_efficiency = 0.7;
  const LayerShape l = GptLayer(2, 64, 128, 8, 4, false);  // s 64: 0.4 forward, 0.3 backward
  const BlockKernels f = AttentionForward(d, l), b = AttentionBackward(d, l);
  for (const char* name : {"scores", "softmax", "av"}) {
    EXPECT_NEAR(Named(f.body, name).memory_efficiency, 0.4, 1e-6) << name;
    EXPECT_NEAR(Named(b.body, name).memory_efficiency, 0.3, 1e-6) << name;
  }
  EXPECT_FLOAT_EQ(Named(f.body, "dropout").memory_efficiency, 0.7F);
  EXPECT_FLOAT_EQ(Named(b.body, "dropout").memory_efficiency, 0.8F);
  for (const char* name : {"qkv", "proj"}) {
    EXPECT_FLOAT_EQ(Named(f.body, name).memory_efficiency, 0.8F) << name;
    EXPECT_FLOAT_EQ(Named(b.body, name).memory_efficiency, 0.8F) << name;
  }
  EXPECT_FLOAT_EQ(Named(f.pre, "ln").memory_efficiency, 0.8F);
  // The GEMMs keep their tile and wave quantised compute efficiency.
  EXPECT_FLOAT_EQ(Named(f.body, "scores").compute_efficiency, static_cast<float>(GemmEfficiency(d, 64, 64, 16, 4)));
  for (const Kernel& k : AttentionCoreRecompute(d, l)) {
    const double want = std::string(k.name) == "dropout" ? 0.7 : 0.4;
    EXPECT_NEAR(k.memory_efficiency, want, 1e-6) << k.name;
  }
  // A device without a dropout figure runs it at memory_efficiency.
  d.attention_dropout_efficiency = 0;
  EXPECT_FLOAT_EQ(Named(AttentionForward(d, l).body, "dropout").memory_efficiency, 0.8F);
}

// The layer norm runs at the measured bandwidth of the kernel the framework
// calls (--layernorm): its bytes are 4 per element forward (read x, write y,
// 2 B each) and 6 backward (x and dy in, dx out), and its efficiency is the
// implementation's, forward or backward; a device without one runs it at
// memory_efficiency.
TEST(GenKernels, LayerNormRunsAtItsImplementationsBandwidth) {
  DeviceModel d = Toy();
  d.layernorm_persistent = {0.6, 0.5};
  d.layernorm_apex = {0.4, 0.3};
  LayerShape l = GptLayer(2, 64, 128, 8, 4, false);
  const uint64_t elems = 2 * 64 * 128;  // b·s·h on this rank (no SP)
  for (bool apex : {false, true}) {
    l.apex_norm = apex;
    const double fwd = apex ? 0.4 : 0.6, bwd = apex ? 0.3 : 0.5;
    for (const BlockKernels& f : {AttentionForward(d, l), MlpForward(d, l)}) {
      EXPECT_FLOAT_EQ(Named(f.pre, "ln").memory_efficiency, static_cast<float>(fwd)) << apex;
      EXPECT_EQ(Named(f.pre, "ln").bytes, 4 * elems);
    }
    for (const BlockKernels& b : {AttentionBackward(d, l), MlpBackward(d, l)}) {
      EXPECT_FLOAT_EQ(Named(b.post, "ln").memory_efficiency, static_cast<float>(bwd)) << apex;
      EXPECT_EQ(Named(b.post, "ln").bytes, 6 * elems);
    }
  }
  d.layernorm_apex = {};
  EXPECT_FLOAT_EQ(Named(AttentionForward(d, l).pre, "ln").memory_efficiency, 0.8F);
  // The A100 preset: apex's fused LayerNorm 895.8 / 572.2 GB/s, the persistent kernel 1,258.0 /
  // 1,163.4 GB/s (NVIDIA/apex PR #1037, B 32 · S 512 · h 1,024, fp16), of the 1,555 GB/s of the
  // A100 40GB they were measured on (docs/generator.md, "Compute model").
  auto a100 = FindDevice("a100");
  ASSERT_TRUE(a100.ok());
  EXPECT_NEAR(a100->model.layernorm_apex.forward, 895.7822 / 1555, 5e-4);
  EXPECT_NEAR(a100->model.layernorm_apex.backward, 572.1678 / 1555, 5e-4);
  EXPECT_NEAR(a100->model.layernorm_persistent.forward, 1258.0318 / 1555, 5e-4);
  EXPECT_NEAR(a100->model.layernorm_persistent.backward, 1163.4357 / 1555, 5e-4);
}

// The tiny GPT model on tp 2 · dp 2 · pp 2 with the A100's kernel model.
Result<Workload> TinyKernelRun(const std::string& extra, Strategy* out) {
  std::vector<std::string> args = {"--model=tiny",     "--tp=2",   "--dp=2",       "--pp=2",
                                   "--microbatches=2", "--zero=1", "--device=a100"};
  if (!extra.empty()) args.push_back(extra);
  auto o = ParseGenArgs(args);
  if (!o.ok()) return o.status();
  *out = o->strategy;
  return GenerateDense(testing::TinyModel(4, 32), o->strategy);
}

const GenNode* Find(const GraphBuilder& g, const std::string& name) {
  for (const GenNode& n : g.nodes()) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// --layernorm reaches every norm of the generated iteration, the final one included.
TEST(GenKernels, TheLayerNormFlagReachesEveryNorm) {
  for (const char* flag : {"--layernorm=persistent", "--layernorm=apex"}) {
    Strategy s;
    auto w = TinyKernelRun(flag, &s);
    ASSERT_TRUE(w.ok()) << w.status().message();
    const bool apex = std::string(flag) == "--layernorm=apex";
    EXPECT_EQ(s.apex_layernorm, apex);
    const NormEfficiency& e = apex ? s.device.layernorm_apex : s.device.layernorm_persistent;
    int norms = 0, final_norms = 0;
    for (const GraphBuilder& g : w->classes) {
      for (const GenNode& n : g.nodes()) {
        const bool final_norm = n.name.find(".final_ln") != std::string::npos;
        if (!final_norm && (n.name.size() < 3 || n.name.compare(n.name.size() - 3, 3, ".ln") != 0)) continue;
        ++norms;
        final_norms += final_norm;
        const bool backward = n.name.rfind("bwd", 0) == 0;
        EXPECT_FLOAT_EQ(n.memory_efficiency, static_cast<float>(backward ? e.backward : e.forward)) << n.name;
      }
    }
    EXPECT_GT(norms, final_norms) << flag;  // the layers' (attention and MLP, forward and backward)
    EXPECT_GT(final_norms, 0) << flag;
  }
  auto bad = ParseGenArgs({"--model=tiny", "--device=a100", "--layernorm=triton"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--layernorm = triton: unknown layer-norm kernel; allowed: persistent"),
            std::string::npos)
      << bad.status().message();
  auto bare = ParseGenArgs({"--model=tiny", "--layernorm=apex"});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("--layernorm = apex: needs the kernel model of a device"), std::string::npos)
      << bare.status().message();
}

TEST(GenKernels, WholeIterationOnTheRightGroups) {
  Strategy s;
  auto w = TinyKernelRun("--sp", &s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(s.kernel_model);
  const ModelDesc m = testing::TinyModel(4, 32);
  const uint64_t act = 32 * 64 * 2;  // b·s·h·2 B
  const GraphBuilder& first = w->classes[0];
  const GraphBuilder& last = w->classes[1];
  // Pipeline messages carry the rank's 1/t (SP: already sharded), no gather after them.
  const GenNode* send = Find(first, "fwd.mb0.send");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->bytes, act / 2);
  EXPECT_EQ(Find(last, "fwd.mb0.recv_gather"), nullptr);
  // Vocab-parallel embedding reduce-scattered over TP (SP); three loss all-reduces of one fp32 per token.
  ASSERT_NE(Find(first, "fwd.mb0.embed_rs"), nullptr);
  EXPECT_EQ(Find(first, "fwd.mb0.embed_rs")->bytes, act);
  ASSERT_NE(Find(last, "fwd.mb0.ce_sum_ar"), nullptr);
  EXPECT_EQ(Find(last, "fwd.mb0.ce_sum_ar")->bytes, 32u * 4);
  // Tied embeddings: first and last stage swap V·h/t·2 bytes of gradients.
  ASSERT_NE(Find(first, "grad.embedding_send"), nullptr);
  EXPECT_EQ(Find(first, "grad.embedding_send")->bytes, uint64_t(m.vocab * m.hidden / 2 * 2));
  EXPECT_EQ(Find(last, "grad.embedding_recv")->bytes, uint64_t(m.vocab * m.hidden / 2 * 2));
  // Adam over the rank's ZeRO-1 shard: 16 bytes read and 12 written per parameter, then the
  // bf16 copy (4 + 2); the gradient buffer of every parameter the rank holds zeroed first (4).
  for (int stage = 0; stage < 2; ++stage) {
    const uint64_t shard = RankParams(m, s, stage) / 2;
    const GenNode* adam = Find(w->classes[stage], "optimizer.adam");
    ASSERT_NE(adam, nullptr);
    EXPECT_EQ(adam->tensor_size, 28 * shard) << "stage " << stage;
    EXPECT_EQ(Find(w->classes[stage], "optimizer.copy_params")->tensor_size, 6 * shard);
    EXPECT_EQ(w->classes[stage].nodes()[0].name, "optimizer.zero_grad");
    EXPECT_EQ(w->classes[stage].nodes()[0].tensor_size, 4 * RankParams(m, s, stage));
    EXPECT_EQ(Find(w->classes[stage], "optimizer.grad_norm")->tensor_size, 4 * shard);
    // The distributed optimizer's parameter all-gathers come after the step.
    const auto& nodes = w->classes[stage].nodes();
    uint32_t adam_idx = 0;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].name == "optimizer.copy_params") adam_idx = i;  // the step's last kernel
    }
    int gathers = 0;
    for (const GenNode& n : nodes) {
      if (n.name.find(".param_ag") == std::string::npos) continue;
      ++gathers;
      ASSERT_EQ(n.deps.size(), 1u);
      EXPECT_EQ(n.deps[0], adam_idx) << n.name;
    }
    EXPECT_GT(gathers, 0);
  }
}

TEST(GenKernels, ScatterGatherWithoutSequenceParallelism) {
  Strategy s;
  auto w = TinyKernelRun("", &s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const uint64_t act = 32 * 64 * 2;
  // The receiver gathers the t shards over TP (all-gather of the 1/t each rank holds).
  const GenNode* g = Find(w->classes[1], "fwd.mb0.recv_gather");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, GenKind::kColl);
  EXPECT_EQ(g->bytes, act / 2);
  EXPECT_EQ(Find(w->classes[1], "fwd.mb0.recv")->bytes, act / 2);
}

// Megatron's interleaved schedule exchanges once per steady step
// (send_forward_backward_recv_forward_backward, after the step's forward and
// backward): on stage 0 of p 2, v 2, m 4 the warm-up runs (p−1)·2 + (v−1)·p =
// 4 forwards, each sending as it ends; the 4 steady forwards send only after
// their step's backward, beside its gradient send, and the stage waits for both.
TEST(GenKernels, InterleavedSteadyStepSendsBothDirectionsAfterItsBackward) {
  auto o = ParseGenArgs(
      {"--model=tiny", "--tp=2", "--pp=2", "--microbatches=4", "--schedule=interleaved:2", "--device=a100"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  auto w = GenerateDense(testing::TinyModel(4, 32), o->strategy);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const auto& nodes = w->classes[0].nodes();
  auto starts = [](const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; };
  int after_forward = 0, after_backward = 0, beside_gradient = 0;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GenNode& n = nodes[i];
    if (n.kind != GenKind::kSend || !starts(n.name, "fwd.")) continue;
    ASSERT_EQ(n.deps.size(), 1u) << n.name;
    const std::string& dep = nodes[n.deps[0]].name;
    if (starts(dep, "fwd.")) {
      ++after_forward;
    } else {
      EXPECT_TRUE(starts(dep, "bwd.")) << n.name << " after " << dep;
      ++after_backward;
      // Beside the step's gradient send (same dependency), when the backward sends one.
      for (const GenNode& m : nodes) {
        if (m.kind == GenKind::kSend && starts(m.name, "bwd.") && m.deps == n.deps) ++beside_gradient;
      }
    }
    // Something later waits for the send: the stage does not run ahead of it.
    bool awaited = false;
    for (uint32_t j = i + 1; j < nodes.size() && !awaited; ++j) {
      for (uint32_t d : nodes[j].deps) awaited = awaited || d == i;
    }
    EXPECT_TRUE(awaited) << n.name;
  }
  EXPECT_EQ(after_forward, 4);
  EXPECT_EQ(after_backward, 4);
  // Stage 0's steady backwards run chunk 1 (virtual stage 2: sends a gradient) for microbatches 0 and 1,
  // then chunk 0 (the first virtual stage: sends none).
  EXPECT_EQ(beside_gradient, 2);
}

// With interleaving, "after the flush" is after the rank's whole backward: a
// chunk whose last microbatch ends early holds its buckets until chunk 0's
// backward is done (Megatron's local DDP reduces after the schedule returns).
// --tp-overlap (Megatron's asynchronous TP communication in the backward of
// QKV and FC1): the GEMM's backward splits into its data gradient and its
// weight gradient; the TP reduction of the data gradient runs beside the
// weight gradient (SP: the reduce-scatter, with the input's all-gather beside
// the data gradient), and the block's next kernel waits for both.
TEST(GenKernels, TpOverlapReducesTheInputGradientBesideTheWeightGradient) {
  auto gen = [](std::vector<std::string> args) {
    auto o = ParseGenArgs(args);
    EXPECT_TRUE(o.ok()) << o.status().message();
    return GenerateDense(testing::TinyModel(2, 32), o->strategy);
  };
  auto index = [](const std::vector<GenNode>& nodes, const std::string& name) {
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  for (const bool sp : {false, true}) {
    std::vector<std::string> args = {"--model=tiny", "--tp=2", "--microbatches=1", "--device=a100"};
    if (sp) args.push_back("--sp");
    auto plain = gen(args);
    args.push_back("--tp-overlap");
    auto over = gen(args);
    ASSERT_TRUE(plain.ok() && over.ok());
    const auto& p = plain->classes[0].nodes();
    const auto& n = over->classes[0].nodes();
    for (const char* block : {"attn", "mlp"}) {
      const std::string b = std::string("bwd.mb0.layer1.") + block + ".";
      const std::string gemm = std::string(block) == "attn" ? "qkv" : "fc1";
      const int whole = index(p, b + gemm), data = index(n, b + gemm + "_dgrad"),
                weight = index(n, b + gemm + "_wgrad");
      // The block's post kernels (its GEMM's bias gradient, the norm) start after both.
      const int reduce = index(n, b + (sp ? "sp_rs" : "tp_ar")), norm = index(n, b + gemm + "_bias_grad");
      ASSERT_GE(whole, 0);
      ASSERT_GE(data, 0);
      ASSERT_GE(weight, 0);
      ASSERT_GE(reduce, 0);
      ASSERT_GE(norm, 0);
      EXPECT_EQ(index(n, b + gemm), -1) << "the whole backward GEMM is gone";
      // The two halves are the whole GEMM's FLOPs and bytes.
      EXPECT_EQ(n[data].num_ops + n[weight].num_ops, p[whole].num_ops) << b;
      EXPECT_EQ(n[data].tensor_size + n[weight].tensor_size, p[whole].tensor_size) << b;
      // reduce after the data gradient only; the weight gradient does not wait for it; the next kernel waits for both.
      EXPECT_EQ(n[reduce].deps, std::vector<uint32_t>{static_cast<uint32_t>(data)}) << b;
      EXPECT_EQ(std::count(n[weight].deps.begin(), n[weight].deps.end(), static_cast<uint32_t>(reduce)), 0) << b;
      EXPECT_EQ(std::count(n[weight].deps.begin(), n[weight].deps.end(), static_cast<uint32_t>(data)), 1) << b;
      for (const int w : {weight, reduce}) {
        EXPECT_EQ(std::count(n[norm].deps.begin(), n[norm].deps.end(), static_cast<uint32_t>(w)), 1) << b << w;
      }
      if (sp) {
        // The input's gather starts with the data gradient (same dependencies); the weight gradient needs it.
        const int gather = index(n, b + "sp_input_ag");
        ASSERT_GE(gather, 0);
        EXPECT_EQ(n[gather].deps, n[data].deps) << b;
        EXPECT_EQ(std::count(n[weight].deps.begin(), n[weight].deps.end(), static_cast<uint32_t>(gather)), 1) << b;
      }
    }
  }
  // Simulated (no SP; on this ring each all-reduce is shorter than the weight gradient beside it): the
  // overlap saves the backward QKV and FC1 all-reduces' time, read from the plain run, up to the
  // nanosecond rounding of the two nodes each GEMM became (at most 1 ns each, 4 GEMMs).
  auto plain = gen({"--model=tiny", "--tp=2", "--microbatches=1", "--device=a100"});
  auto over = gen({"--model=tiny", "--tp=2", "--microbatches=1", "--device=a100", "--tp-overlap"});
  ASSERT_TRUE(plain.ok() && over.ok());
  TempDir d1, d2;
  auto r1 = testing::SimulateOnRing(plain.value(), d1, 100, 1);
  auto r2 = testing::SimulateOnRing(over.value(), d2, 100, 1);
  ASSERT_TRUE(r1.ok() && r2.ok()) << r1.status().message() << r2.status().message();
  Tick hidden = 0;
  int reductions = 0;
  for (const CollectiveReport& c : r1->collectives) {
    if (c.name.rfind("bwd.", 0) == 0 && c.name.find(".tp_ar") != std::string::npos) {
      hidden += c.end_ns - c.start_ns;
      ++reductions;
    }
  }
  EXPECT_EQ(reductions, 4);  // two layers, attention and MLP
  EXPECT_GT(hidden, 100);
  const Tick saved = orrery::testing::MaxFinished(r1.value()) - orrery::testing::MaxFinished(r2.value());
  EXPECT_LE(saved, hidden + 8);
  EXPECT_GE(saved + 8, hidden);
  auto bare = ParseGenArgs({"--model=tiny", "--tp=2", "--tp-overlap"});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("--tp-overlap = true: needs the kernel model of a device"), std::string::npos)
      << bare.status().message();
}

TEST(GenKernels, AfterFlushWithInterleavingWaitsForEveryChunk) {
  for (const bool after : {false, true}) {
    std::vector<std::string> args = {"--model=tiny", "--dp=2", "--pp=2", "--microbatches=4", "--schedule=interleaved:2",
                                     "--device=a100"};
    if (after) args.push_back("--grad-reduce=after-flush");
    auto o = ParseGenArgs(args);
    ASSERT_TRUE(o.ok()) << o.status().message();
    auto w = GenerateDense(testing::TinyModel(4, 32), o->strategy);
    ASSERT_TRUE(w.ok()) << w.status().message();
    const auto& nodes = w->classes[0].nodes();
    uint32_t last_bwd = 0;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].name.rfind("bwd.", 0) == 0 && nodes[i].kind == GenKind::kComp) last_bwd = i;
    }
    int before_end = 0, reductions = 0;
    uint64_t bytes = 0;
    for (const GenNode& n : nodes) {
      if (n.name.find(".dp_ar") == std::string::npos) continue;
      ++reductions;
      bytes += n.bytes;
      ASSERT_FALSE(n.deps.empty());
      before_end += n.deps[0] < last_bwd;
    }
    // bf16: 4-byte gradients of every parameter the rank holds, reduced once either way.
    EXPECT_EQ(bytes, 4 * RankParams(testing::TinyModel(4, 32), o->strategy, 0)) << after;
    EXPECT_GT(reductions, 0);
    if (after) {
      EXPECT_EQ(before_end, 0);  // none before chunk 0's last backward kernel
    } else {
      EXPECT_GT(before_end, 0);  // overlapped: chunk 1's buckets go during chunk 0's backward
    }
  }
}

TEST(GenKernels, AfterFlushHoldsEveryBucketUntilTheBackwardEnds) {
  Strategy s;
  auto flush = TinyKernelRun("--grad-reduce=after-flush", &s);
  ASSERT_TRUE(flush.ok()) << flush.status().message();
  // After the flush: every gradient reduction depends on the stage's last backward node.
  const auto& nodes = flush->classes[1].nodes();
  uint32_t last_bwd = 0;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name.rfind("bwd.", 0) == 0 && nodes[i].kind == GenKind::kComp) last_bwd = i;
  }
  int reductions = 0;
  for (const GenNode& n : nodes) {
    if (n.name.find(".dp_rs") == std::string::npos) continue;
    ++reductions;
    ASSERT_FALSE(n.deps.empty());
    EXPECT_GE(n.deps[0], last_bwd) << n.name;
  }
  EXPECT_GT(reductions, 0);
  // Every gradient is reduced once, overlapped or after the flush, whatever the bucket size. On
  // stage 1 of pp 2 (logits 8,192 + final norm 128 + two layers of 49,984 parameters, 4 bytes
  // each: 433,152 B) a 0.4 MiB (419,430 B) bucket is first full with the stage's last layer:
  // held, it must still go at the flush, where nothing is left to add.
  for (const char* bucket : {"--bucket-mb=25", "--bucket-mb=0.01", "--bucket-mb=0.4"}) {
    uint64_t totals[2] = {0, 0}, expected = 0;
    for (int after = 0; after < 2; ++after) {
      std::vector<std::string> args = {"--model=tiny", "--dp=2",        "--pp=2", "--microbatches=2",
                                       "--zero=1",     "--device=a100", bucket};
      if (after) args.push_back("--grad-reduce=after-flush");
      auto o = ParseGenArgs(args);
      ASSERT_TRUE(o.ok()) << o.status().message();
      auto w = GenerateDense(testing::TinyModel(4, 32), o->strategy);
      ASSERT_TRUE(w.ok());
      expected = 4 * RankParams(testing::TinyModel(4, 32), o->strategy, 1);  // bf16: 4-byte gradients
      for (const GenNode& n : w->classes[1].nodes()) {
        if (n.name.find(".dp_rs") != std::string::npos) totals[after] += n.bytes;
      }
    }
    EXPECT_EQ(totals[0], expected) << bucket;
    EXPECT_EQ(totals[1], totals[0]) << bucket;
  }
  EXPECT_FALSE(ParseGenArgs({"--model=tiny", "--grad-reduce=later"}).ok());
  auto bad = ParseGenArgs({"--model=tiny", "--grad-reduce=later"});
  EXPECT_NE(bad.status().message().find("--grad-reduce = later: unknown gradient reduction"), std::string::npos)
      << bad.status().message();
  auto acc = ParseGenArgs({"--model=tiny", "--grad-accumulation=later"});
  ASSERT_FALSE(acc.ok());
  EXPECT_NE(acc.status().message().find("--grad-accumulation = later: unknown gradient accumulation; allowed: fused"),
            std::string::npos)
      << acc.status().message();
  auto flash = ParseGenArgs({"--model=tiny", "--flash-attention"});
  ASSERT_FALSE(flash.ok());
  EXPECT_NE(flash.status().message().find("needs the kernel model of a device"), std::string::npos);
}

// The roofline with a node's efficiencies: max(ops / (peak · ce), bytes / (bw · me)).
TEST(GenKernels, RooflineUsesTheNodesEfficiencies) {
  TempDir d;
  d.Write("network.yml", orrery::testing::NetworkYaml("Ring", 2, 50, 500));
  // peak 100 TFLOP/s, local-mem-bw 1600 GB/s.
  d.Write("system.json",
          orrery::testing::SystemJson("ring", 1, 10, 1600, 1, ", \"roofline-enabled\": 1, \"peak-perf\": 100"));
  orrery::testing::WriteTraces(d, 2, [](int) {
    auto a = MakeNode(0, ChakraProtoMsg::COMP_NODE);
    SetAttr(&a, "num_ops", uint64_t{1000000000});  // 1e9 ops at 100e12·0.25: 40,000 ns
    SetAttr(&a, "tensor_size", uint64_t{1000});
    auto* e = a.add_attr();
    e->set_name("compute_efficiency");
    e->set_double_val(0.25);
    auto b = MakeNode(1, ChakraProtoMsg::COMP_NODE);
    SetAttr(&b, "num_ops", uint64_t{1000});
    SetAttr(&b, "tensor_size", uint64_t{16000000});  // 16e6 B at 1600e9·0.5 B/s: 20,000 ns
    auto* f = b.add_attr();
    f->set_name("memory_efficiency");
    f->set_double_val(0.5);
    b.add_data_deps(0);
    return std::vector<ChakraProtoMsg::Node>{a, b};
  });
  auto r = orrery::testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 60000u);

  // Out of (0, 1]: refused, naming the file, node and attribute.
  orrery::testing::WriteTraces(d, 2, [](int) {
    auto a = MakeNode(0, ChakraProtoMsg::COMP_NODE);
    SetAttr(&a, "num_ops", uint64_t{1000});
    SetAttr(&a, "tensor_size", uint64_t{1000});
    auto* e = a.add_attr();
    e->set_name("compute_efficiency");
    e->set_double_val(1.5);
    return std::vector<ChakraProtoMsg::Node>{a};
  });
  auto bad = orrery::testing::RunIn(d);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 0 (rank 0): compute_efficiency = 1.5: out of range"), std::string::npos)
      << bad.status().message();

  // A string is no number: named with its text.
  orrery::testing::WriteTraces(d, 2, [](int) {
    auto a = MakeNode(0, ChakraProtoMsg::COMP_NODE);
    SetAttr(&a, "num_ops", uint64_t{1000});
    SetAttr(&a, "tensor_size", uint64_t{1000});
    SetAttr(&a, "memory_efficiency", std::string("high"));
    return std::vector<ChakraProtoMsg::Node>{a};
  });
  auto text = orrery::testing::RunIn(d);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("memory_efficiency = \"high\": a string, not a number; allowed: a number > 0"),
            std::string::npos)
      << text.status().message();
}

// Gradient widths: bf16 keeps fp32 gradients (DP buckets of 4 bytes a
// parameter, the unfused add reads 4 + 2 and writes 4), fp16 16-bit ones
// (2; 2 + 2 and 2) and its step first copies them to fp32 and unscales them.
TEST(GenKernels, PrecisionSetsTheGradientWidth) {
  const ModelDesc m = testing::TinyModel(4, 32);
  for (const char* precision : {"bf16", "fp16"}) {
    const uint64_t width = std::string(precision) == "bf16" ? 4 : 2;
    auto o = ParseGenArgs({"--model=tiny", "--dp=2", "--microbatches=2", "--zero=0", "--device=a100",
                           "--grad-reduce=after-flush", "--grad-accumulation=unfused",
                           std::string("--precision=") + precision});
    ASSERT_TRUE(o.ok()) << o.status().message();
    auto w = GenerateDense(m, o->strategy);
    ASSERT_TRUE(w.ok()) << w.status().message();
    const GraphBuilder& g = w->classes[0];
    const uint64_t layer = static_cast<uint64_t>(LayerParams(m, 0));
    const GenNode* add = Find(g, "bwd.mb0.layer0.grad_accumulate");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(add->tensor_size, (2 * width + 2) * layer) << precision;
    uint64_t reduced = 0;
    for (const GenNode& n : g.nodes()) {
      if (n.name.find(".dp_ar") != std::string::npos) reduced += n.bytes;
    }
    // Every parameter of the rank (dp 2, no TP or PP) is reduced once, at the gradient width.
    EXPECT_EQ(reduced, width * RankParams(m, o->strategy, 0)) << precision;
    EXPECT_EQ(Find(g, "optimizer.unscale") != nullptr, width == 2) << precision;
  }
  auto bad = ParseGenArgs({"--model=tiny", "--precision=fp8"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--precision = fp8: unknown precision; allowed: bf16 or fp16"),
            std::string::npos)
      << bad.status().message();
}

// Ranks whose traces differ only in a node's efficiency are not symmetric:
// rank 1's node runs at half the compute efficiency, so it takes twice as
// long (1e9 ops at 100 TFLOP/s: 10,000 ns; at 0.5 of it: 20,000 ns).
TEST(GenKernels, RanksThatDifferInAnEfficiencyAreNotSymmetric) {
  TempDir d;
  d.Write("network.yml", orrery::testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json",
          orrery::testing::SystemJson("ring", 1, 10, 1600, 1, ", \"roofline-enabled\": 1, \"peak-perf\": 100"));
  orrery::testing::WriteTraces(d, 2, [](int r) {
    auto a = MakeNode(0, ChakraProtoMsg::COMP_NODE);
    SetAttr(&a, "num_ops", uint64_t{1000000000});
    SetAttr(&a, "tensor_size", uint64_t{1000});
    auto* e = a.add_attr();
    e->set_name("compute_efficiency");
    e->set_double_val(r == 0 ? 1.0 : 0.5);
    return std::vector<ChakraProtoMsg::Node>{a};
  });
  auto r = orrery::testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->symmetric);
  EXPECT_EQ(r->per_npu[0].finished_ns, 10000u);
  EXPECT_EQ(r->per_npu[1].finished_ns, 20000u);
}

}  // namespace
}  // namespace orrery::gen
