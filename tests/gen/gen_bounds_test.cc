// The generator's sizes: every product of flags and model dimensions is
// checked before it is formed, and a workload too large to hold is refused
// before anything is built, each with a message naming the numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/limits.h"
#include "gen/gen_args.h"
#include "gen/model.h"
#include "gen/placement.h"
#include "gen/strategy.h"
#include "network/notation.h"
#include "network/topology.h"
#include "system/comm_group.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

const ModelDesc& Preset(const std::string& name) {
  for (const ModelDesc& m : Presets()) {
    if (m.name == name) return m;
  }
  return Presets()[0];
}

std::string Message(const Status& st) { return st.ok() ? std::string("(ok)") : st.message(); }

TEST(GenBounds, NpuProductIsCheckedBeforeItOverflows) {
  // 2^24 on three axes: 2^72 NPUs, an int64 overflow before the check.
  auto huge = ParseGenArgs({"--model=gpt3-175b", "--tp=16777216", "--cp=16777216", "--dp=16777216"});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(),
            "--tp·--cp·--ep·--dp·--pp = 16777216·16777216·1·16777216·1 = about 4.7e+21: above 67108864 from --cp on; "
            "allowed: NPUs up to 67108864 (2^26)");
  // 12.9 G NPUs fit in int64 but not in kMaxNpus: refused before 48 GB of ranks are allocated.
  auto big = ParseGenArgs({"--model=gpt3-175b", "--tp=8", "--dp=16777216", "--pp=96"});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "--tp·--cp·--ep·--dp·--pp = 8·1·1·16777216·96 = 12884901888: above 67108864 from --dp on; allowed: NPUs "
            "up to 67108864 (2^26)");
  Strategy s;
  s.tp = 8;
  s.dp = 16777216;
  s.pp = 96;
  EXPECT_NE(Message(ValidateStrategy(Preset("gpt3-175b"), s)).find("= 12884901888: above 67108864"), std::string::npos);
}

TEST(GenBounds, BatchProductsAreChecked) {
  auto per = ParseGenArgs({"--model=x.yml", "--dp=16777216", "--microbatch-size=1048576", "--global-batch=1073741824"});
  ASSERT_FALSE(per.ok());
  EXPECT_EQ(per.status().message(),
            "--microbatch-size·--dp·--ep = 1048576·16777216·1 = 17592186044416: above 1073741824 from --dp on; "
            "allowed: samples per step up to 1073741824 (2^30)");
  Strategy s;
  s.microbatch_size = 1 << 20;
  s.microbatches = 1 << 20;
  auto st = ValidateStrategy(Preset("gpt3-175b"), s);
  EXPECT_EQ(Message(st),
            "--microbatch-size·--microbatches·--dp·--ep = 1048576·1048576·1·1 = 1099511627776: above 1073741824 from "
            "--microbatches on; allowed: samples per iteration up to 1073741824 (2^30)");
}

TEST(GenBounds, PlacementProductsAreChecked) {
  // Not finished (ReadGenArgs): the placement checks the product itself.
  auto o = ReadGenArgs({"--model=gpt3-175b", "--tp=16777216", "--cp=16777216", "--ep=16777216", "--dp=16777216",
                        "--pp=16777216", "--network=Ring(8,100GB/s,1us)", "--place=tp:0"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  std::vector<Dim> dims;
  const Status st = ResolvePlacement(&o.value(), &dims);
  EXPECT_NE(Message(st).find("--tp·--cp·--ep·--dp·--pp = 16777216·16777216·16777216·16777216·16777216 = about "
                             "1.3e+36: above 67108864 from --cp on"),
            std::string::npos)
      << Message(st);
  // Five axes of 2^24 on one dimension: their product is not formed past the dimension's NPUs.
  auto net = ParseTopologyNotation("Ring(8,100GB/s,1us)");
  ASSERT_TRUE(net.ok());
  const int64_t a = int64_t{1} << 24;
  auto order = OrderFromPlacement("tp:0,cp:0,ep:0,dp:0,pp:0", {a, a, a, a, a}, net.value());
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("dim0 Ring has 8 NPUs but the axes placed on it (tp·cp·ep·dp·pp) "
                                          "multiply to more than 67108864"),
            std::string::npos)
      << order.status().message();
}

TEST(GenBounds, TooManyNodesRefusedBeforeBuilding) {
  Strategy s;
  s.pp = 2;
  s.microbatches = 65536;
  EXPECT_EQ(Message(ValidateStrategy(Preset("gpt3-175b"), s)),
            "--microbatches·layers = 65536·96 over 2 stage(s): the generated workload would hold about 281020160 "
            "nodes (about 67.0 GiB); allowed: at most 33554432 nodes (about 8.0 GiB): fewer --microbatches (a "
            "smaller global batch) or fewer layers");
  // The largest benchmark (docs/benchmarks.md): 1 T on 3,072 NPUs, 512 microbatches, 64 stages, kernel model.
  Strategy t;
  t.tp = 8;
  t.pp = 64;
  t.dp = 6;
  t.microbatches = 512;
  t.kernel_model = true;
  EXPECT_TRUE(ValidateStrategy(Preset("megatron-1t"), t).ok());
  EXPECT_LE(EstimateGenNodes(Preset("megatron-1t"), t), kMaxGenNodes / 4);
}

uint64_t Nodes(const Workload& w) {
  uint64_t n = 0;
  for (const GraphBuilder& g : w.classes) n += g.nodes().size();
  return n;
}

TEST(GenBounds, NodeEstimateIsAnUpperBound) {
  struct Case {
    const char* model;
    std::vector<std::string> flags;
  };
  const std::vector<Case> cases = {
      {"gpt3-175b", {"--tp=8", "--pp=8", "--microbatches=8"}},
      {"gpt3-175b",
       {"--tp=8", "--pp=8", "--microbatches=8", "--sp", "--recompute=full", "--offload=activations", "--zero=3",
        "--cp=8"}},
      {"gpt3-175b",
       {"--tp=8", "--pp=4", "--microbatches=8", "--device=h100", "--sp", "--recompute=full",
        "--offload=activations,optimizer", "--zero=3", "--cp=4", "--grad-accumulation=unfused", "--precision=fp16",
        "--schedule=interleaved:3"}},
      {"mixtral-8x7b",
       {"--tp=2", "--ep=8", "--pp=4", "--microbatches=4", "--device=h100", "--sp", "--recompute=selective",
        "--offload=activations", "--zero=3", "--cp=16", "--grad-accumulation=unfused"}},
      {"llama3-8b", {"--dp=4", "--microbatches=3", "--device=a100", "--flash-attention", "--zero=1"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.flags;
    args.push_back(std::string("--model=") + c.model);
    auto o = ParseGenArgs(args);
    ASSERT_TRUE(o.ok()) << o.status().message();
    auto w = GenerateDense(Preset(c.model), o->strategy);
    ASSERT_TRUE(w.ok()) << w.status().message();
    const uint64_t est = EstimateGenNodes(Preset(c.model), o->strategy), real = Nodes(w.value());
    EXPECT_GE(est, real) << c.model << " " << args[0];
    EXPECT_LE(est, 8 * real) << c.model << " " << args[0];  // an estimate, not a wild guess
  }
}

TEST(GenBounds, NodeOperationsAndBytesAreChecked) {
  Strategy s;
  s.tp = 8;
  s.microbatch_size = 1 << 20;
  EXPECT_EQ(Message(ValidateStrategy(Preset("gpt3-175b"), s)),
            "--microbatch-size·seq_len/cp·hidden·vocab·2 = 1048576·2048·12288·51200·2 = 2702159776422297600: above "
            "31250000000000000 from vocab on; allowed: at most 31250000000000000 operations in one generated forward "
            "node (1e18/32, room for the backward pass); a smaller --microbatch-size, more --cp, or a smaller model");
}

// The group's ranks walked one by one: the definition SpannedDims answers.
uint32_t SpannedByWalking(const std::array<int64_t, kNumAxes>& sizes, const std::array<Axis, kNumAxes>& order,
                          AxisSet set, const std::vector<Dim>& dims) {
  Layout layout(sizes, order);
  uint32_t mask = 0;
  for (int r : layout.GroupRanks(0, set)) {
    int64_t rank = r;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (rank % dims[k].npus != 0) mask |= 1u << k;
      rank /= dims[k].npus;
    }
  }
  return mask;
}

// The closed form (boundaries in a chain of divisors) and the walk (any
// other placement) agree with the definition on every shape, order and
// group of 48 and 64 NPUs over several networks.
TEST(GenBounds, SpannedDimsEqualsWalkingTheGroup) {
  const std::vector<std::pair<int64_t, std::vector<std::vector<int>>>> cases = {
      {64, {{64}, {8, 8}, {4, 16}, {2, 4, 8}, {16, 2, 2}}},
      {48, {{48}, {4, 12}, {6, 8}, {3, 16}, {2, 3, 8}}},
  };
  int checked = 0;
  for (const auto& [npus, networks] : cases) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= npus; ++d) {
      if (npus % d == 0) divisors.push_back(d);
    }
    for (const auto& net : networks) {
      std::vector<Dim> dims;
      for (int n : net) dims.push_back(Dim{Block::kRing, n, 100, 500, 1});
      for (int64_t tp : divisors) {
        for (int64_t dp : divisors) {
          if ((npus / tp) % dp != 0) continue;
          const std::array<int64_t, kNumAxes> sizes{tp, 1, 1, dp, npus / tp / dp};
          std::array<Axis, kNumAxes> order{Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};
          do {
            for (AxisSet set : {Axes(Axis::kTp), Axes(Axis::kDp), Axes(Axis::kPp), kDenseDp,
                                static_cast<AxisSet>(Axes(Axis::kTp) | Axes(Axis::kPp))}) {
              ASSERT_EQ(SpannedDims(sizes, order, set, dims), SpannedByWalking(sizes, order, set, dims))
                  << "tp " << tp << " dp " << dp << " set " << int(set) << " dims " << dims.size();
              ++checked;
            }
          } while (std::next_permutation(order.begin(), order.end(),
                                         [](Axis a, Axis b) { return static_cast<int>(a) < static_cast<int>(b); }));
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

// The search's closed form of a group's grid (GroupDimsIfChained,
// RunsPerDimension) and the engine's, from the ranks of every group over the
// set (GridOf, PhasesPerDimension), agree wherever the boundaries chain: on
// the counts per dimension, on whether they are a progression, and on whether
// the hierarchical model runs the group per dimension.
TEST(GenBounds, GroupGridClosedFormEqualsTheEnginesGrid) {
  const std::vector<std::vector<std::pair<Block, int>>> networks = {
      {{Block::kSwitch, 8}, {Block::kSwitch, 8}},
      {{Block::kSwitch, 8}, {Block::kRing, 8}},
      {{Block::kRing, 4}, {Block::kSwitch, 16}},
      {{Block::kSwitch, 4}, {Block::kFullyConnected, 4}, {Block::kSwitch, 4}},
      {{Block::kRing, 2}, {Block::kSwitch, 4}, {Block::kRing, 8}},
  };
  int checked = 0, gridded = 0;
  for (const auto& net : networks) {
    std::vector<Dim> dims;
    int64_t npus = 1;
    for (const auto& [block, n] : net) dims.push_back(Dim{block, n, 100, 500, 1}), npus *= n;
    const Topology topo(dims);
    for (int64_t tp = 1; tp <= npus; tp *= 2) {
      for (int64_t dp = 1; tp * dp <= npus; dp *= 2) {
        const std::array<int64_t, kNumAxes> sizes{tp, 1, 1, dp, npus / tp / dp};
        std::array<Axis, kNumAxes> order{Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};
        do {
          const Layout layout(sizes, order);
          for (AxisSet set : {Axes(Axis::kTp), Axes(Axis::kDp), Axes(Axis::kPp),
                              static_cast<AxisSet>(Axes(Axis::kTp) | Axes(Axis::kPp))}) {
            GroupDims closed;
            ASSERT_TRUE(GroupDimsIfChained(sizes, order, set, dims, &closed));
            for (int64_t rank : {int64_t{0}, npus / 2 + 1, npus - 1}) {
              std::vector<int> ranks = layout.GroupRanks(rank, set);
              std::sort(ranks.begin(), ranks.end());
              const GroupGrid g = GridOf(topo, ranks);
              const std::string what = "tp " + std::to_string(tp) + " dp " + std::to_string(dp) + " set " +
                                       std::to_string(int(set)) + " rank " + std::to_string(rank) + " network " +
                                       std::to_string(dims.size());
              ASSERT_EQ(g.grid, closed.gaps == 0) << what;
              for (size_t k = 0; k < dims.size(); ++k) {
                ASSERT_EQ(g.n[k], closed.count[k]) << what << " dim " << k;
                ASSERT_EQ(g.n[k] > 1, ((closed.spanned >> k) & 1u) != 0) << what << " dim " << k;
              }
              ASSERT_EQ(PhasesPerDimension(topo, g), RunsPerDimension(closed, dims)) << what;
              gridded += PhasesPerDimension(topo, g) && !g.aligned;
              ++checked;
            }
          }
        } while (std::next_permutation(order.begin(), order.end(),
                                       [](Axis a, Axis b) { return static_cast<int>(a) < static_cast<int>(b); }));
      }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(gridded, 100);  // partial grids were among them
}

std::string WriteModel(const orrery::testing::TempDir& d, const std::string& text) {
  const std::string path = d.File("m.yml");
  std::ofstream(path) << text;
  return path;
}

TEST(GenBounds, ModelDimensionsAreBounded) {
  orrery::testing::TempDir d;
  // 2^40 was accepted and overflowed int64 in the per-layer sizes.
  auto wide = ReadModelYaml(WriteModel(d, "layers: 2\nhidden: 1099511627776\nheads: 1\nvocab: 8\nseq_len: 8\n"));
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().message(), d.File("m.yml") +
                                         ":2: hidden = \"1099511627776\": out of range; allowed: an integer >= 1 and "
                                         "<= 16777216");
  auto emb = ReadModelYaml(WriteModel(d, "layers: 2\nhidden: 16777216\nheads: 1\nvocab: 16777216\nseq_len: 8\n"));
  ASSERT_FALSE(emb.ok());
  EXPECT_EQ(emb.status().message(), d.File("m.yml") +
                                        ":2: vocab·hidden = 16777216·16777216 = 281474976710656: above 17592186044416 "
                                        "from hidden on; allowed: at most 17592186044416 parameters (2^44)");
  auto heads = ReadModelYaml(
      WriteModel(d, "layers: 2\nhidden: 64\nheads: 65536\nhead_dim: 65536\nvocab: 8\nseq_len: 8\n"));
  ASSERT_FALSE(heads.ok());
  EXPECT_EQ(heads.status().message(), d.File("m.yml") +
                                          ":4: heads·head_dim = 65536·65536 = 4294967296: above 16777216 from "
                                          "head_dim on; allowed: at most 16777216 (2^24)");
  auto moe = ReadModelYaml(WriteModel(d,
                                      "layers: 2\nhidden: 16384\nheads: 8\nvocab: 8\nseq_len: 8\nexperts: 65536\n"
                                      "top_k: 2\nexpert_ffn: 16777216\n"));
  ASSERT_FALSE(moe.ok());
  EXPECT_EQ(moe.status().message(), d.File("m.yml") +
                                        ":8: experts+shared_experts·hidden·expert_ffn·matrices = "
                                        "65536·16384·16777216·2 = 36028797018963968: above 17592186044416 from "
                                        "expert_ffn on; allowed: at most 17592186044416 parameters (2^44)");
  auto layers = ReadModelYaml(WriteModel(d, "layers: 65536\nhidden: 65536\nheads: 64\nvocab: 8\nseq_len: 8\n"));
  ASSERT_FALSE(layers.ok());
  EXPECT_EQ(layers.status().message(), d.File("m.yml") +
                                           ":1: layers·parameters per layer = 65536·51540459520 = 3377755555102720: "
                                           "above 17592186044416 from parameters per layer on; allowed: at most "
                                           "17592186044416 parameters (2^44)");
}

}  // namespace
}  // namespace orrery::gen
