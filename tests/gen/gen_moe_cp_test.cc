// Expert parallelism (MoE dispatch/combine all-to-alls, top-k FLOPs, expert
// gradients over their own group) and context parallelism (ring attention
// K/V exchange): closed forms and simulated iterations derived by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tick.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "gen/strategy.h"
#include "gen/summary.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

using orrery::testing::TempDir;

// s 16, h 64, 4 heads of 16, ffn 256, V 128: GPT-shaped, biases, LayerNorm.
ModelDesc Tiny(int64_t layers) { return testing::TinyModel(layers, 16); }

// Tiny with every `freq`-th layer a MoE of 4 experts (FFN 128), top-2.
ModelDesc TinyMoe(int64_t layers, int64_t freq) {
  ModelDesc m = Tiny(layers);
  m.experts = 4;
  m.top_k = 2;
  m.expert_ffn = 128;
  m.moe_layer_freq = freq;
  return m;
}

std::pair<uint64_t, uint64_t> Comm(const GraphBuilder& g, const std::string& key) {
  const auto t = Totals(g);
  auto it = t.comm.find(key);
  return it == t.comm.end() ? std::make_pair(uint64_t{0}, uint64_t{0}) : it->second;
}

TEST(GenFlops, GeneralFormEqualsKorthikantiForGptShapes) {
  for (const char* name : {"gpt3-175b", "megatron-22b", "megatron-1t"}) {
    auto m = LoadModel(name);
    ASSERT_TRUE(m.ok());
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      EXPECT_EQ(FlopsText(ModelFlops(m.value(), 1536, r)), FlopsText(KorthikantiFlops(m.value(), 1536, r))) << name;
    }
  }
}

// Per sample, per MoE layer, forward: 2sh·E router + 2sh·f_e·2·k experts,
// instead of the dense 2sh·f·2. Tiny MoE, one MoE layer (freq 1), s 16:
// attention 2·16·64·192 + 2·16·64·64 + 4·16²·64 = 589,824; router 2·16·64·4
// = 8,192; experts 2·16·64·128·2·2 = 1,048,576; logits 2·16·64·128 = 262,144.
TEST(GenFlops, MoeTopKByHand) {
  const ModelDesc m = TinyMoe(1, 1);
  const Flops fwd = 589824 + 8192 + 1048576 + 262144;
  EXPECT_EQ(FlopsText(ModelFlops(m, 1, Recompute::kNone)), FlopsText(3 * fwd));
  EXPECT_EQ(FlopsText(ModelFlops(m, 5, Recompute::kSelective)), FlopsText(5 * (3 * fwd + 4 * 16 * 16 * 64)));
  EXPECT_EQ(FlopsText(ModelFlops(m, 1, Recompute::kFull)), FlopsText(3 * fwd + (fwd - 262144)));
}

// Summed over every rank's compute nodes, the generated FLOPs equal the
// closed form for MoE with EP (and TP, DP, PP) and for CP, in every
// recomputation mode: nothing is counted twice or lost in the sharding.
TEST(GenFlops, GeneratedMoeAndContextParallelMatchTheClosedForm) {
  struct Case {
    ModelDesc m;
    int64_t tp, cp, ep, dp, pp;
  };
  const Case cases[] = {
      {TinyMoe(2, 2), 2, 1, 2, 2, 1},  // layer 1 MoE, layer 0 dense
      {TinyMoe(4, 1), 1, 1, 4, 1, 2},  // every layer MoE, two stages
      {Tiny(2), 2, 2, 1, 2, 1},        // CP 2 with TP 2
      {Tiny(2), 1, 4, 1, 1, 2},        // CP 4, two stages
      {TinyMoe(2, 1), 1, 2, 2, 1, 1},  // CP and EP together
  };
  for (const Case& c : cases) {
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      Strategy s;
      s.tp = c.tp, s.cp = c.cp, s.ep = c.ep, s.dp = c.dp, s.pp = c.pp;
      s.microbatches = 2;
      s.recompute = r;
      auto w = GenerateDense(c.m, s);
      ASSERT_TRUE(w.ok()) << w.status().message();
      const uint64_t batch = 2 * c.dp * c.ep;  // b·m·dp·ep samples
      EXPECT_EQ(FlopsText(TotalFlops(w.value())), FlopsText(ModelFlops(c.m, batch, r)))
          << "tp " << c.tp << " cp " << c.cp << " ep " << c.ep << " dp " << c.dp << " pp " << c.pp << " recompute "
          << static_cast<int>(r);
    }
  }
}

// Each MoE layer and microbatch: dispatch and combine forward, their
// gradients backward: 4 all-to-alls of tokens·k·h·2 bytes over the EP group.
// Dense gradients reduce over ep·dp, expert gradients over dp alone.
TEST(GenStrategy, ExpertParallelAllToAllsAndGradientGroups) {
  const ModelDesc m = TinyMoe(2, 2);  // layer 0 dense, layer 1 MoE
  Strategy s;
  s.tp = 2, s.ep = 2, s.dp = 2, s.microbatches = 3;
  s.bucket_bytes = 1ull << 40;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const uint64_t a2a = 16 * 2 * 64 * 2;  // s·k·h·2 B (b 1)
  EXPECT_EQ(Comm(w->classes[0], "all-to-all ep"), std::make_pair(uint64_t{4 * 3}, 4 * 3 * a2a));
  // Parameters by hand (h 64, ffn 256, expert ffn 128, E 4, V 128, s 16):
  // attention 4h² + 4h biases = 16,640; norms 2·2h = 256; dense FFN
  // 2·h·256 + 256 + h = 33,088; router h·E = 256; experts E·(2·h·128 + 128 + h) = 66,304;
  // embeddings (V + s)·h = 9,216. TP 2 halves all, EP 2 halves the experts.
  const uint64_t dense = (16640 + 256 + 33088) + (16640 + 256 + 256) + 9216;
  const uint64_t expert = 66304;
  EXPECT_EQ(Comm(w->classes[0], "all-reduce ep+dp").second, dense / 2 * 2);
  EXPECT_EQ(Comm(w->classes[0], "all-reduce dp").second, expert / 4 * 2);
  // Groups (order tp-cp-ep-dp-pp, strides tp 1, ep 2, dp 4): rank 0's dense
  // group {0,2,4,6}, its expert group {0,4}, its EP group {0,2}.
  const Layout& l = w->layout;
  EXPECT_EQ(l.GroupRanks(0, kDenseDp), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(l.GroupRanks(0, kExpertDp), (std::vector<int>{0, 4}));
  EXPECT_EQ(l.GroupRanks(3, Axis::kEp), (std::vector<int>{1, 3}));
  const auto groups = l.AllGroups();
  EXPECT_EQ(groups.size(), 4u + 4u + 4u + 2u);  // tp, ep, dp, and two ep+dp groups
  EXPECT_EQ(groups.at(l.GroupName(5, kDenseDp)), (std::vector<int>{1, 3, 5, 7}));
  // ZeRO-1: memory shards dense states over 4 ranks, expert states over 2.
  // The rank also holds the final LayerNorm (2h), whose gradient the
  // generator does not reduce.
  s.zero = 1;
  const MemoryFootprint f = StageMemory(m, s, 0);
  const uint64_t held = (dense + 2 * 64) / 2;
  EXPECT_EQ(f.params, held + expert / 4);
  EXPECT_EQ(f.model_state_bytes, 4 * held + 12 * held / 4 + 4 * (expert / 4) + 12 * (expert / 4) / 2);
}

// Ring attention: per layer and microbatch, cp − 1 K/V blocks of
// 2·(s/cp)·kv·d/t·2 bytes forward and twice that backward, to the next rank
// of the CP ring (the last rank's next is the first).
TEST(GenStrategy, ContextParallelRingPassesKeyValueBlocks) {
  const ModelDesc m = Tiny(2);
  Strategy s;
  s.cp = 4, s.microbatches = 2;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const uint64_t block = 2 * (16 / 4) * 64 * 2;  // K and V of 4 tokens, 64 channels, bf16
  EXPECT_EQ(Comm(w->classes[0], "send cp"),
            std::make_pair(uint64_t{2 * 2 * 3 * 2}, uint64_t{2 * 2 * 3} * (block + 2 * block)));
  auto g3 = ToNpuGraph(w.value(), 3, {{w->layout.GroupName(0, Axis::kCp), 0}});
  ASSERT_TRUE(g3.ok()) << g3.status().message();
  for (const WorkNode& n : g3->nodes) {
    if (n.kind == NodeKind::kSend) {
      EXPECT_EQ(n.comm_dst, 0) << n.name;
    }
    if (n.kind == NodeKind::kRecv) {
      EXPECT_EQ(n.comm_src, 2) << n.name;
    }
  }
  // Bad: cp not dividing the sequence.
  s.cp = 3;
  s.npus = 0;
  Status st = ValidateStrategy(m, s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--cp = 3 does not divide seq_len = 16"), std::string::npos) << st.message();
}

// ---- Simulated, derived by hand ----

Tick NodeNs(uint64_t ops) { return testing::RooflineNs(ops); }

Result<RunReport> Simulate(const Workload& w, const TempDir& d, double bw_gbps, double latency_ns) {
  return testing::SimulateOnRing(w, d, bw_gbps, latency_ns);
}

// Ring of 2 NPUs, one chunk, no endpoint delay (tests/closed_form_test.cc):
// a collective phase step moves bytes/2; one P2P message is one hop.
struct Ring2 {
  double bw_gbps, lat_ns;
  Tick Step(double bytes) const { return static_cast<Tick>(lat_ns + bytes / GiBpsToBytesPerNs(bw_gbps)); }
  Tick AllReduce(uint64_t bytes) const { return 2 * Step(static_cast<double>(bytes / 2)); }
  Tick AllToAll(uint64_t bytes) const { return Step(static_cast<double>(bytes / 2)); }  // (p−1)·p/2 steps of bytes/p
  Tick Message(uint64_t bytes) const { return Step(static_cast<double>(bytes)); }
};

// EP 2 on 2 NPUs, one MoE layer, one microbatch: a chain of compute and the
// four all-to-alls, then the dense gradients' all-reduce over the EP ranks
// (they saw different samples); the experts' own gradients need none (one
// expert-data-parallel rank).
TEST(GenSimulated, ExpertParallelIsComputePlusFourAllToAlls) {
  const ModelDesc m = TinyMoe(1, 1);
  Strategy s;
  s.ep = 2;
  s.bucket_bytes = 1ull << 40;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  TempDir d;
  const Ring2 ring{50, 500};
  auto r = Simulate(w.value(), d, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t attn = 589824, router = 8192, experts = 1048576, logits = 262144;
  const Tick compute = NodeNs(attn) + NodeNs(router) + NodeNs(experts) + NodeNs(logits) + NodeNs(2 * logits) +
                       NodeNs(2 * experts) + NodeNs(2 * router) + NodeNs(2 * attn);
  const uint64_t a2a = 16 * 2 * 64 * 2;
  const uint64_t dense_grads = ((16640 + 256 + 256) + 9216) * 2;  // attention, norms, router; embeddings
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), compute + 4 * ring.AllToAll(a2a) + ring.AllReduce(dense_grads));
}

// CP 2 on 2 NPUs, one layer, one microbatch. Forward attention: QKV with the
// local block's core, the K/V block to the other rank while nothing else
// waits, the remote block's core once it arrives, the projection. Backward:
// projection, local core, remote core once K/V and their gradients arrive,
// QKV. Then the gradients' all-reduce over the two CP ranks.
TEST(GenSimulated, ContextParallelRingAttention) {
  const ModelDesc m = Tiny(1);
  Strategy s;
  s.cp = 2;
  s.bucket_bytes = 1ull << 40;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  TempDir d;
  const Ring2 ring{50, 500};
  auto r = Simulate(w.value(), d, ring.bw_gbps, ring.lat_ns);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t tokens = 8, h = 64;
  const uint64_t qkv = 2 * tokens * h * 3 * h, proj = 2 * tokens * h * h, core = 4 * tokens * tokens * h;
  const uint64_t mlp = 2 * tokens * h * 256 * 2, logits = 2 * tokens * h * 128;
  const uint64_t block = 2 * tokens * h * 2;
  const Tick fwd_attn = NodeNs(qkv + core) + std::max<Tick>(0, ring.Message(block)) + NodeNs(core) + NodeNs(proj);
  // Backward: the send leaves after the projection; the remote core waits
  // for the later of the local core and the message.
  const Tick bwd_attn = NodeNs(2 * proj) + std::max(NodeNs(2 * core), ring.Message(2 * block)) + NodeNs(2 * core) +
                        NodeNs(2 * qkv);
  const Tick compute = NodeNs(mlp) + NodeNs(logits) + NodeNs(2 * logits) + NodeNs(2 * mlp);
  const uint64_t grads = (16640 + 33088 + 256 + 9216) * 2;
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()), fwd_attn + compute + bwd_attn + ring.AllReduce(grads));
}

}  // namespace
}  // namespace orrery::gen

namespace orrery::gen {
namespace {

// --offload=activations: per layer and microbatch a MEM_STORE of the layer's
// saved activations (Korthikanti Table 2; Tiny, t 1, no SP, no recompute:
// sbh·(34 + 5as/h) = 16·64·(34 + 5·4·16/64) = 39,936 B) and a MEM_LOAD back;
// --offload=optimizer: 12 bytes per parameter (ZeRO-1 over d) loaded and stored once.
TEST(GenOffload, MemoryNodesAndFootprint) {
  const ModelDesc m = Tiny(2);
  Strategy s;
  s.dp = 2, s.microbatches = 3, s.zero = 1;
  s.offload_activations = true;
  s.offload_optimizer = true;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  uint64_t stores = 0, loads = 0, store_bytes = 0, load_bytes = 0;
  for (const GenNode& n : w->classes[0].nodes()) {
    if (n.kind == GenKind::kMemStore) ++stores, store_bytes += n.tensor_size;
    if (n.kind == GenKind::kMemLoad) ++loads, load_bytes += n.tensor_size;
  }
  // Parameters: 2 layers of 49,984 + embeddings 9,216 + final norm 128 = 109,312.
  const uint64_t psi = 2 * 49984 + 9216 + 128, opt = 12 * psi / 2;
  EXPECT_EQ(stores, 2u * 3u + 1u);
  EXPECT_EQ(loads, 2u * 3u + 1u);
  EXPECT_EQ(store_bytes, 6 * uint64_t{39936} + opt);
  EXPECT_EQ(load_bytes, store_bytes);
  const MemoryFootprint f = StageMemory(m, s, 0);
  EXPECT_EQ(f.model_state_bytes, 4 * psi);                            // ZeRO-1 4Ψ + 12Ψ/d, the 12Ψ/d in the pool
  EXPECT_EQ(f.activation_bytes, 2 * uint64_t{39936});                 // the layer computing and the one in transfer
  EXPECT_EQ(f.offloaded_bytes, opt + (2 * 1 - 2) * uint64_t{39936});  // 1F1B, p 1: one microbatch in flight
}

// One layer, one microbatch, two DP ranks, each with its own remote memory
// (PER_NPU_MEMORY_EXPANSION, latency 100 us, 10 GB/s): the store leaves after
// the forward and overlaps the output layer; the load waits for the store
// and for the output layer's backward; the MLP backward waits for the load.
TEST(GenSimulated, ActivationOffloadThroughTheRemoteMemory) {
  const ModelDesc m = Tiny(1);
  Strategy s;
  s.dp = 2;
  s.bucket_bytes = 1ull << 40;
  s.offload_activations = true;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  TempDir d;
  ASSERT_TRUE(WriteChakra(w.value(), d.File("trace")).ok());
  d.Write("network.yml", orrery::testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json",
          orrery::testing::SystemJson("ring", 1, 0, 1e9, 1, ", \"roofline-enabled\": 1, \"peak-perf\": 1"));
  d.Write("memory.json",
          R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 100000, "remote-mem-bw": 10})");
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.remote_memory = d.File("memory.json");
  c.files.comm_groups = d.File("trace.comm_groups.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const uint64_t s_ = 16, h = 64;
  const uint64_t attn = 2 * s_ * h * 3 * h + 2 * s_ * h * h + 4 * s_ * s_ * h, mlp = 2 * s_ * h * 256 * 2;
  const uint64_t logits = 2 * s_ * h * 128;
  const Tick fwd = NodeNs(attn) + NodeNs(mlp);
  const Tick mem = 100000 + 39936 / 10;  // latency + bytes / (10 bytes per ns)
  const Tick load_start = std::max(fwd + NodeNs(logits) + NodeNs(2 * logits), fwd + mem);
  const Ring2 ring{50, 500};
  const uint64_t grads = (16640 + 33088 + 256 + 9216) * 2;
  EXPECT_EQ(orrery::testing::MaxFinished(r.value()),
            load_start + mem + NodeNs(2 * mlp) + NodeNs(2 * attn) + ring.AllReduce(grads));
}

TEST(GenOffload, FlagIsCheckedAndRunNeedsARemoteMemory) {
  auto bad = ParseGenArgs({"--model=gpt3-175b", "--offload=activation"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--offload = activation: unknown 'activation' (did you mean 'activations'?)"),
            std::string::npos)
      << bad.status().message();
  std::string err;
  EXPECT_EQ(orrery::testing::RunCli("run --generate=\"--model=megatron-22b --tp=2 --offload=activations\" "
                                    "--system-configuration=s.json --network-configuration=\"Ring(2,50GB/s,1us)\"",
                                    &err),
            2);
  EXPECT_NE(err.find("--offload moves data to a remote memory"), std::string::npos) << err;
}

}  // namespace
}  // namespace orrery::gen
