// Strategy → per-rank graphs: FLOPs, bytes per collective, groups, errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "gen/gen_args.h"
#include "gen/generate.h"
#include "gen/strategy.h"
#include "gen/summary.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

ModelDesc Gpt(int64_t l, int64_t h, int64_t a, int64_t s, int64_t v) {
  ModelDesc m;
  m.name = "gpt";
  m.layers = l;
  m.hidden = h;
  m.ffn = 4 * h;
  m.heads = a;
  m.kv_heads = a;
  m.head_dim = h / a;
  m.vocab = v;
  m.seq_len = s;
  return m;
}

const ModelDesc& Preset(const std::string& name) {
  for (const ModelDesc& m : Presets()) {
    if (m.name == name) return m;
  }
  return Presets()[0];
}

// Per (collective, axis): {count, bytes} over one class.
std::pair<uint64_t, uint64_t> Comm(const GraphBuilder& g, const std::string& key) {
  auto t = Totals(g);
  auto it = t.comm.find(key);
  return it == t.comm.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
}

TEST(GenStrategy, FlopsOverAllRanksAreKorthikanti) {
  const ModelDesc m = Gpt(4, 64, 4, 32, 256);
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    for (bool sp : {false, true}) {
      Strategy s;
      s.tp = 2;
      s.pp = 2;
      s.dp = 2;
      s.microbatches = 4;
      s.microbatch_size = 2;
      s.sp = sp;
      s.recompute = r;
      auto w = GenerateDense(m, s);
      ASSERT_TRUE(w.ok()) << w.status().message();
      EXPECT_EQ(FlopsText(TotalFlops(w.value())), FlopsText(KorthikantiFlops(m, 2 * 4 * 2, r)))
          << static_cast<int>(r) << " sp " << sp;
    }
  }
}

TEST(GenStrategy, InterleavedKeepsFlopsAndChecksItsRules) {
  const ModelDesc m = Gpt(8, 64, 4, 32, 256);
  Strategy s;
  s.tp = 2;
  s.pp = 2;
  s.dp = 2;
  s.microbatches = 4;
  s.schedule = Schedule::kInterleaved;
  s.chunks = 2;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(FlopsText(TotalFlops(w.value())), FlopsText(KorthikantiFlops(m, 4 * 2, Recompute::kNone)));
  s.microbatches = 3;
  EXPECT_EQ(ValidateStrategy(m, s).message(),
            "--schedule=interleaved: --microbatches = 3 is not a multiple of --pp = 2; allowed: a multiple of pp "
            "(Megatron's rule)");
  s.microbatches = 4;
  s.chunks = 3;
  EXPECT_EQ(ValidateStrategy(m, s).message(),
            "--schedule=interleaved:3: 8 layers do not split into pp·chunks = 6 equal chunks; allowed: layers "
            "divisible by pp·chunks");
  // Activations held on stage 0 at the peak: p·V + p − 1 chunks, l·(1 + (p−1)/(pV)) layers.
  const ModelDesc big = Gpt(16, 64, 4, 32, 256);
  Strategy si;
  si.pp = 4;
  si.chunks = 2;
  si.microbatches = 8;
  si.schedule = Schedule::kInterleaved;
  const MemoryFootprint f = StageMemory(big, si, 0);
  EXPECT_EQ(f.in_flight * f.layers, 16 + 16 * 3 / 8);
  EXPECT_EQ(f.activation_bytes, ActivationBytesPerLayer(big, 1, 1, false, Recompute::kNone) * 22);
  auto o = ParseGenArgs({"--model=x", "--schedule=interleaved:4"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->strategy.schedule, Schedule::kInterleaved);
  EXPECT_EQ(o->strategy.chunks, 4);
  EXPECT_FALSE(ParseGenArgs({"--model=x", "--schedule=interleaved:1"}).ok());
}

TEST(GenStrategy, Gpt3On1024NpusFlopsAreKorthikanti) {
  Strategy s;
  s.tp = 8;
  s.pp = 8;
  s.dp = 16;
  s.microbatches = 32;
  s.sp = true;
  s.recompute = Recompute::kSelective;
  auto w = GenerateDense(Preset("gpt3-175b"), s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->classes.size(), 8u);  // one class per stage
  EXPECT_EQ(w->class_of_rank.size(), 1024u);
  // 72·B·s·l·h²·(1 + 2s/(9h) + V/(12lh)) with B = 512.
  EXPECT_EQ(FlopsText(TotalFlops(w.value())),
            FlopsText(KorthikantiFlops(Preset("gpt3-175b"), 512, Recompute::kSelective)));
}

TEST(GenStrategy, FlopTotalsBeyond64Bits) {
  // GPT-3, B = 16384 on 16,384 NPUs: 72Bslh² alone is 7.5e19 > 2^64.
  Strategy s;
  s.tp = 8;
  s.pp = 16;
  s.dp = 128;
  s.microbatches = 128;
  auto w = GenerateDense(Preset("gpt3-175b"), s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->classes.size(), 16u);
  const Flops want = KorthikantiFlops(Preset("gpt3-175b"), 16384, Recompute::kNone);
  EXPECT_GT(want, static_cast<Flops>(UINT64_MAX));
  EXPECT_EQ(FlopsText(TotalFlops(w.value())), FlopsText(want));
  EXPECT_EQ(FlopsText(Flops{12345678901234567890ull} * 10 + 1), "123456789012345678901");
}

TEST(GenStrategy, TensorParallelAllReducesPerLayer) {
  // A 13B-class shape: s 2048, h 5120, b 1: each TP all-reduce is b·s·h·2 = 20,971,520 B.
  const ModelDesc m = Gpt(2, 5120, 40, 2048, 51200);
  Strategy s;
  s.tp = 8;
  s.microbatches = 3;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const auto ar = Comm(w->classes[0], "all-reduce tp");
  // 2 forward + 2 backward per layer per microbatch.
  EXPECT_EQ(ar.first, 4u * 2 * 3);
  EXPECT_EQ(ar.second, ar.first * 20971520u);
  for (const GenNode& n : w->classes[0].nodes()) {
    if (n.kind == GenKind::kColl) {
      EXPECT_EQ(n.bytes, 20971520u);
    }
  }
  // With SP, the pairs become all-gather + reduce-scatter of the same tensor.
  s.sp = true;
  auto w2 = GenerateDense(m, s);
  ASSERT_TRUE(w2.ok());
  EXPECT_EQ(Comm(w2->classes[0], "all-reduce tp").first, 0u);
  // All-gather comm_size is each rank's shard (ASTRA-sim), b·s·h·2/t.
  EXPECT_EQ(Comm(w2->classes[0], "all-gather tp"), std::make_pair(uint64_t{24}, 24 * uint64_t{20971520} / 8));
  EXPECT_EQ(Comm(w2->classes[0], "reduce-scatter tp"), std::make_pair(uint64_t{24}, 24 * uint64_t{20971520}));
}

TEST(GenStrategy, DataParallelGradientsPerZeroStage) {
  const ModelDesc m = Gpt(4, 64, 4, 32, 256);
  Strategy s;
  s.dp = 4;
  s.microbatches = 2;
  s.bucket_bytes = 40000;  // several buckets
  // ZeRO-0: all-reduce of every gradient (2 bytes per parameter) once per iteration.
  auto w0 = GenerateDense(m, s);
  ASSERT_TRUE(w0.ok());
  const uint64_t grads = 2 * static_cast<uint64_t>(ParamCount(m) - 2 * 64);  // all but the final norm
  const auto ar = Comm(w0->classes[0], "all-reduce dp");
  EXPECT_EQ(ar.second, grads);
  EXPECT_GT(ar.first, 1u);
  // ZeRO-1/2: reduce-scatter of the gradients and all-gather of the updated parameters.
  s.zero = 2;
  auto w2 = GenerateDense(m, s);
  EXPECT_EQ(Comm(w2->classes[0], "reduce-scatter dp").second, grads);
  // The updated parameters come back as shards: each bucket's all-gather is bytes/d.
  uint64_t shards = 0;
  for (const GenNode& n : w2->classes[0].nodes()) {
    if (n.kind == GenKind::kColl && n.coll == Coll::kReduceScatter) shards += n.bytes / 4;
  }
  EXPECT_EQ(Comm(w2->classes[0], "all-gather dp").second, shards);
  EXPECT_EQ(Comm(w2->classes[0], "all-reduce dp").first, 0u);
  // ZeRO-3: parameters gathered per layer before each forward and backward of each microbatch.
  s.zero = 3;
  auto w3 = GenerateDense(m, s);
  EXPECT_EQ(Comm(w3->classes[0], "reduce-scatter dp").second, grads);
  EXPECT_EQ(Comm(w3->classes[0], "all-gather dp").first, 4u * 2 * 2);
  EXPECT_EQ(Comm(w3->classes[0], "all-gather dp").second,
            4u * 2 * 2 * (2 * static_cast<uint64_t>(LayerParams(m, 0)) / 4));
}

TEST(GenStrategy, RankOrderPlacesAxes) {
  Layout tp_inner({2, 1, 1, 4, 2}, {Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp});
  EXPECT_EQ(tp_inner.GroupRanks(0, Axis::kTp), (std::vector<int>{0, 1}));
  EXPECT_EQ(tp_inner.GroupRanks(0, Axis::kDp), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(tp_inner.GroupRanks(3, Axis::kPp), (std::vector<int>{3, 11}));
  Layout dp_inner({2, 1, 1, 4, 2}, {Axis::kDp, Axis::kTp, Axis::kCp, Axis::kEp, Axis::kPp});
  EXPECT_EQ(dp_inner.GroupRanks(0, Axis::kTp), (std::vector<int>{0, 4}));
  EXPECT_EQ(dp_inner.GroupRanks(0, Axis::kDp), (std::vector<int>{0, 1, 2, 3}));
  // Every rank is in exactly one group per axis of size > 1: 8 tp + 4 dp + 8 pp groups... (16/2, 16/4, 16/2).
  EXPECT_EQ(tp_inner.AllGroups().size(), 8u + 4u + 8u);
}

TEST(GenStrategy, GeneratedGraphEqualsTheLoadedTrace) {
  const ModelDesc m = Gpt(2, 64, 4, 32, 256);
  Strategy s;
  s.tp = 2;
  s.pp = 2;
  s.dp = 2;
  s.microbatches = 2;
  auto w = GenerateDense(m, s);
  ASSERT_TRUE(w.ok());
  orrery::testing::TempDir d;
  ASSERT_TRUE(WriteChakra(w.value(), d.File("t")).ok());
  auto groups = ReadCommGroupJson(d.File("t.comm_groups.json"), 8);
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  std::map<std::string, int> index;
  for (const auto& [name, ranks] : groups.value()) index.emplace(name, static_cast<int>(index.size()));
  for (int rank : {0, 5}) {
    GraphLoadOptions o;
    o.num_npus = 8;
    o.num_dims = 1;
    o.groups = &index;
    auto loaded = LoadNpuGraph(d.File("t." + std::to_string(rank) + ".et"), rank, o);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    auto built = ToNpuGraph(w.value(), rank, index);
    ASSERT_TRUE(built.ok());
    ASSERT_EQ(loaded->nodes.size(), built->nodes.size());
    EXPECT_EQ(loaded->children, built->children);
    for (size_t i = 0; i < built->nodes.size(); ++i) {
      const WorkNode &a = loaded->nodes[i], &b = built->nodes[i];
      EXPECT_EQ(a.kind, b.kind);
      EXPECT_EQ(a.num_ops, b.num_ops);
      EXPECT_EQ(a.tensor_size, b.tensor_size);
      EXPECT_EQ(a.collective, b.collective);
      EXPECT_EQ(a.comm_size, b.comm_size);
      EXPECT_EQ(a.comm_src, b.comm_src);
      EXPECT_EQ(a.comm_dst, b.comm_dst);
      EXPECT_EQ(a.comm_tag, b.comm_tag);
      EXPECT_EQ(a.group, b.group);
      EXPECT_EQ(a.num_deps, b.num_deps);
    }
  }
}

Status Check(const std::string& model, const Strategy& s) { return ValidateStrategy(Preset(model), s); }

TEST(GenStrategy, BadStrategiesNameTheRule) {
  Strategy s;
  s.tp = 8;
  s.pp = 8;
  s.dp = 16;
  s.npus = 512;
  EXPECT_EQ(Check("gpt3-175b", s).message(),
            "tp·cp·ep·dp·pp = 8·1·1·16·8 = 1024 NPUs, but --npus = 512; allowed: sizes whose product is the NPU count");
  s = Strategy();
  s.tp = 64;
  EXPECT_EQ(Check("gpt3-175b", s).message(),
            "--tp = 64 does not divide the 96 attention heads of gpt3-175b; allowed: a divisor of heads");
  s.tp = 16;
  EXPECT_EQ(Check("llama3-8b", s).message(),
            "--tp = 16 does not divide the 8 KV heads of llama3-8b; allowed: a divisor of kv_heads");
  s = Strategy();
  s.pp = 64;
  EXPECT_EQ(Check("llama3-8b", s).message(),
            "--pp = 64 stages but llama3-8b has only 32 layers; allowed: pp <= layers");
  s = Strategy();
  s.ep = 3;
  EXPECT_EQ(Check("mixtral-8x7b", s).message(),
            "--ep = 3 does not divide the 8 experts of mixtral-8x7b; allowed: a divisor of experts");
  s = Strategy();
  s.dp = 4;
  s.microbatches = 2;
  s.global_batch = 12;
  EXPECT_NE(Check("gpt3-175b", s).message().find("--global-batch = 12 is not microbatch-size·microbatches·dp"),
            std::string::npos);
}

TEST(GenStrategy, OverCapacityNamesStageAndNumbers) {
  Strategy s;  // GPT-3 on one NPU: 16 bytes per parameter alone is 2.8 TB.
  const Status st = CheckCapacity(Preset("gpt3-175b"), s, 80'000'000'000);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("memory over capacity on pipeline stage 0 (rank class 0): model states 2793.85 GB"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("> --hbm-gb capacity 80.00 GB"), std::string::npos) << st.message();
  // 16 bytes × 174,615,846,912 parameters = 2,793,853,550,592 B.
  EXPECT_EQ(StageMemory(Preset("gpt3-175b"), s, 0).model_state_bytes, 16 * uint64_t{174615846912});
}

TEST(GenArgs, ParsesAndRejects) {
  auto o = ParseGenArgs({"--model=gpt3-175b", "--tp=8", "--pp=8", "--dp=16", "--microbatches=32", "--sp",
                         "--recompute=selective", "--zero=1", "--schedule=gpipe", "--order=dp-tp-cp-ep-pp"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->strategy.tp, 8);
  EXPECT_EQ(o->strategy.microbatches, 32);
  EXPECT_TRUE(o->strategy.sp);
  EXPECT_EQ(o->strategy.zero, 1);
  EXPECT_EQ(o->strategy.schedule, Schedule::kGpipe);
  EXPECT_EQ(o->strategy.order[0], Axis::kDp);

  auto bad = ParseGenArgs({"--model=x", "--microbatch=4"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown flag --microbatch (did you mean --microbatches?)"), std::string::npos)
      << bad.status().message();
  auto num = ParseGenArgs({"--model=x", "--tp=8x"});
  ASSERT_FALSE(num.ok());
  EXPECT_NE(num.status().message().find("--tp = "), std::string::npos) << num.status().message();
  auto order = ParseGenArgs({"--model=x", "--order=tp-dp-pp"});
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("every axis must appear once"), std::string::npos);
  auto gb = ParseGenArgs({"--model=x", "--dp=4", "--global-batch=10"});
  ASSERT_FALSE(gb.ok());
  EXPECT_NE(gb.status().message().find("--global-batch = 10: not divisible by microbatch-size·dp·ep = 4"),
            std::string::npos)
      << gb.status().message();
  auto gb2 = ParseGenArgs({"--model=x", "--dp=4", "--microbatch-size=2", "--global-batch=16"});
  ASSERT_TRUE(gb2.ok());
  EXPECT_EQ(gb2->strategy.microbatches, 2);
}

TEST(GenCommand, ListSummaryAndExitCodes) {
  std::ostringstream out, err;
  EXPECT_EQ(orrery::RunGenCommand({"--list-models"}, out, err), 0);
  EXPECT_NE(out.str().find("gpt3-175b: 174.6 B parameters"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(orrery::RunGenCommand({"--model=gpt3-175b", "--tp=8", "--pp=8", "--dp=16", "--microbatches=32", "--sp",
                                   "--recompute=selective", "--zero=1", "--summary"},
                                  out2, err2),
            0)
      << err2.str();
  EXPECT_NE(out2.str().find("bubble (p-1)/(m+p-1) = 0.1795"), std::string::npos) << out2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(orrery::RunGenCommand({"--model=gpt3-175b", "--summary"}, out3, err3), 2);
  EXPECT_NE(err3.str().find("memory over capacity"), std::string::npos) << err3.str();
  std::ostringstream out4, err4;
  EXPECT_EQ(orrery::RunGenCommand({"--model=gpt3-175b", "--tp=5"}, out4, err4), 2);
  EXPECT_NE(err4.str().find("--tp = 5 does not divide the 96 attention heads"), std::string::npos) << err4.str();
}

TEST(GenBuilder, MemoryNodesAndPeersRoundTrip) {
  // Two ranks on a pp axis: rank 0 loads, computes, stores and sends; rank 1 receives.
  Workload w;
  w.layout = Layout({1, 1, 1, 1, 2}, {Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp});
  GraphBuilder a, b;
  const NodeRef load = a.MemLoad("load", 4096, {});
  const NodeRef comp = a.Compute("comp", 1000, 8192, {load});
  a.MemStore("store", 2048, {comp});
  a.Send("send", Axis::kPp, +1, 512, 7, {comp});
  b.Recv("recv", Axis::kPp, -1, 512, 7, {});
  w.classes = {a, b};
  w.class_of_rank = {0, 1};
  orrery::testing::TempDir d;
  ASSERT_TRUE(WriteChakra(w, d.File("t")).ok());
  std::map<std::string, int> none;
  GraphLoadOptions o;
  o.num_npus = 2;
  o.num_dims = 1;
  auto g0 = LoadNpuGraph(d.File("t.0.et"), 0, o);
  ASSERT_TRUE(g0.ok()) << g0.status().message();
  ASSERT_EQ(g0->nodes.size(), 4u);
  EXPECT_EQ(g0->nodes[0].kind, NodeKind::kMemLoad);
  EXPECT_EQ(g0->nodes[0].tensor_size, 4096u);
  EXPECT_EQ(g0->nodes[2].kind, NodeKind::kMemStore);
  EXPECT_EQ(g0->nodes[3].comm_dst, 1);
  EXPECT_EQ(g0->nodes[3].comm_tag, 7u);
  auto g1 = LoadNpuGraph(d.File("t.1.et"), 1, o);
  ASSERT_TRUE(g1.ok()) << g1.status().message();
  EXPECT_EQ(g1->nodes[0].comm_src, 0);
  auto built = ToNpuGraph(w, 0, none);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built->children, g0->children);
}

// Each node's attributes by name, in the order written.
std::vector<std::string> AttrNames(const ChakraProtoMsg::Node& n) {
  std::vector<std::string> names;
  for (const auto& a : n.attr()) names.push_back(a.name());
  return names;
}

TEST(GenBuilder, AstraSimExampleSpellingOfTimedNodesAndOrder) {
  // The toy traces' shape: timed compute holding its output, an offload and a
  // reload ordered after the previous compute, an all-reduce over all NPUs.
  Workload w;
  w.layout = Layout({1, 1, 1, 2, 1}, {Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp});
  GraphBuilder b;
  const NodeRef fwd = b.Timed("fwd", 500, 4096, {});
  const NodeRef store = b.MemStore("offload", 4096, {fwd});
  const NodeRef load = b.MemLoad("reload", 4096, {store});
  b.OrderAfter(load, fwd);
  const NodeRef bwd = b.Timed("bwd", 1000, 0, {fwd, load});
  b.Collective("allreduce", Coll::kAllReduce, 1 << 20, Axis::kDp, {bwd});
  w.classes = {b};
  w.class_of_rank = {0, 0};
  orrery::testing::TempDir d;
  ASSERT_TRUE(WriteChakra(w, d.File("t"), ChakraSpelling::kAstraSimExample).ok());
  EXPECT_FALSE(std::filesystem::exists(d.File("t.comm_groups.json")));
  EtReader r;
  ASSERT_TRUE(r.Open(d.File("t.1.et")).ok());
  std::vector<ChakraProtoMsg::Node> nodes(5);
  for (auto& n : nodes) ASSERT_TRUE(r.Next(&n).value());
  using Names = std::vector<std::string>;
  EXPECT_EQ(AttrNames(nodes[0]), (Names{"is_cpu_op", "output_bytes"}));
  EXPECT_EQ(nodes[0].duration_micros(), 500u);
  EXPECT_EQ(AttrNames(nodes[2]), (Names{"is_cpu_op", "tensor_size"}));
  EXPECT_EQ(nodes[2].ctrl_deps_size(), 1);
  EXPECT_EQ(AttrNames(nodes[3]), (Names{"is_cpu_op"}));
  EXPECT_EQ(AttrNames(nodes[4]), (Names{"is_cpu_op", "comm_type", "comm_size"}));
  EXPECT_EQ(nodes[4].attr(2).int64_val(), 1 << 20);
  // The simulator's graph from the file equals the one built in memory.
  GraphLoadOptions o;
  o.num_npus = 2;
  o.num_dims = 1;
  auto loaded = LoadNpuGraph(d.File("t.1.et"), 1, o);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto built = ToNpuGraph(w, 1, {{w.layout.GroupName(1, Axis::kDp), -1}});
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(loaded->children, built->children);
  ASSERT_EQ(loaded->nodes.size(), built->nodes.size());
  for (size_t i = 0; i < built->nodes.size(); ++i) {
    const WorkNode &x = loaded->nodes[i], &y = built->nodes[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.duration_micros, y.duration_micros);
    EXPECT_EQ(x.output_bytes, y.output_bytes);
    EXPECT_EQ(x.tensor_size, y.tensor_size);
    EXPECT_EQ(x.comm_size, y.comm_size);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.num_deps, y.num_deps);
  }
}

TEST(GenCommand, WritesTracesAndGroups) {
  orrery::testing::TempDir d;
  d.Write("m.yml", "layers: 4\nhidden: 64\nheads: 4\nvocab: 256\nseq_len: 32\n");
  std::ostringstream out, err;
  EXPECT_EQ(orrery::RunGenCommand({"--model=" + d.File("m.yml"), "--tp=2", "--pp=2", "--dp=2", "--microbatches=2",
                                   "--out=" + d.File("g")},
                                  out, err),
            0)
      << err.str();
  for (int r = 0; r < 8; ++r) {
    GraphLoadOptions o;
    o.num_npus = 8;
    o.num_dims = 1;
    auto groups = ReadCommGroupJson(d.File("g.comm_groups.json"), 8);
    ASSERT_TRUE(groups.ok());
    std::map<std::string, int> index;
    for (const auto& [name, ranks] : groups.value()) index.emplace(name, static_cast<int>(index.size()));
    o.groups = &index;
    EXPECT_TRUE(LoadNpuGraph(d.File("g." + std::to_string(r) + ".et"), r, o).ok()) << r;
  }
  std::ostringstream out2, err2;
  EXPECT_EQ(orrery::RunGenCommand({"--model=" + d.File("nope.yml")}, out2, err2), 2);
  EXPECT_NE(err2.str().find("nope.yml: cannot read the model file"), std::string::npos) << err2.str();
}

}  // namespace
}  // namespace orrery::gen
