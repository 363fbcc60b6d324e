// Model presets, the YAML reader and the closed forms of docs/generator.md.
#include <gtest/gtest.h>

#include <cmath>

#include "gen/formulas.h"
#include "gen/model.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

using orrery::testing::TempDir;

const ModelDesc& Preset(const std::string& name) {
  for (const ModelDesc& m : Presets()) {
    if (m.name == name) return m;
  }
  ADD_FAILURE() << "no preset " << name;
  return Presets()[0];
}

TEST(GenModel, Gpt3ParametersAreNarayananEq2) {
  const ModelDesc& m = Preset("gpt3-175b");
  // 12·l·h² + 13·l·h + (V+s)·h with l 96, h 12288, V 51200, s 2048, by hand:
  // 173,946,175,488 + 15,335,424 + 654,311,424.
  EXPECT_EQ(NarayananParams(m), 174615822336);
  // The same as 12lh²(1 + 13/(12h) + (V+s)/(12lh)) in floating point: 174.6 B.
  const double l = 96, h = 12288;
  const double eq2 = 12 * l * h * h * (1 + 13 / (12 * h) + (51200 + 2048) / (12 * l * h));
  EXPECT_NEAR(NarayananParams(m), eq2, 1.0);
  EXPECT_EQ(std::round(eq2 / 1e8) / 10, 174.6);
  // The exact count from the shape adds the final layer norm (2h), which eq. 2 leaves out.
  EXPECT_EQ(ParamCount(m), 174615822336 + 2 * 12288);
}

TEST(GenModel, Llama3ParameterCounts) {
  // Llama-3 8B: untied 128256×4096 embeddings twice, 32 layers of GQA attention
  // (2·4096² + 2·4096·1024), SwiGLU 3·4096·14336, two RMSNorms, final norm.
  const int64_t l8 = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * int64_t{4096} * 14336 + 2 * 4096;
  EXPECT_EQ(ParamCount(Preset("llama3-8b")), 2 * int64_t{128256} * 4096 + 32 * l8 + 4096);
  EXPECT_EQ(ParamCount(Preset("llama3-8b")), 8030261248);  // "8B": 8.03e9
  const int64_t l70 = 2 * int64_t{8192} * 8192 + 2 * 8192 * 1024 + 3 * int64_t{8192} * 28672 + 2 * 8192;
  EXPECT_EQ(ParamCount(Preset("llama3-70b")), 2 * int64_t{128256} * 8192 + 80 * l70 + 8192);
  EXPECT_NEAR(ParamCount(Preset("llama3-70b")) / 1e9, 70.6, 0.05);
  EXPECT_NEAR(ParamCount(Preset("llama3-405b")) / 1e9, 405.9, 0.5);
  EXPECT_NEAR(ParamCount(Preset("mixtral-8x7b")) / 1e9, 46.7, 0.1);  // Jiang et al.: 47B total
}

TEST(GenModel, KorthikantiFlopsMatchTheClosedForms) {
  const ModelDesc& m = Preset("gpt3-175b");
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const double none = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  // Selective recomputation adds one forward of QKᵀ and attention over V (4Bs²lh).
  const double sel = 72 * B * s * l * h * h * (1 + 2 * s / (9 * h) + V / (12 * l * h));
  const double full = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(static_cast<double>(KorthikantiFlops(m, 1536, Recompute::kNone)) / none, 1.0, 1e-12);
  EXPECT_NEAR(static_cast<double>(KorthikantiFlops(m, 1536, Recompute::kSelective)) / sel, 1.0, 1e-12);
  EXPECT_NEAR(static_cast<double>(KorthikantiFlops(m, 1536, Recompute::kFull)) / full, 1.0, 1e-12);
}

TEST(GenModel, ActivationBytesPerKorthikantiTable2) {
  const ModelDesc& m = Preset("gpt3-175b");  // s 2048, h 12288, a 96
  const uint64_t s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const uint64_t sbh = s * b * h;
  // Table 2, row by row (sbh·(...) expanded into integers by hand).
  EXPECT_EQ(ActivationBytesPerLayer(m, b, 1, false, Recompute::kNone), sbh * 34 + 5 * a * s * s * b);
  EXPECT_EQ(ActivationBytesPerLayer(m, b, t, false, Recompute::kNone), sbh * 10 + sbh * 24 / t + 5 * a * s * s * b / t);
  EXPECT_EQ(ActivationBytesPerLayer(m, b, t, true, Recompute::kNone), sbh * 34 / t + 5 * a * s * s * b / t);
  EXPECT_EQ(ActivationBytesPerLayer(m, b, t, false, Recompute::kSelective), sbh * 10 + sbh * 24 / t);
  EXPECT_EQ(ActivationBytesPerLayer(m, b, t, true, Recompute::kSelective), sbh * 34 / t);
  EXPECT_EQ(ActivationBytesPerLayer(m, b, t, true, Recompute::kFull), sbh * 2);
  // The headline number of the paper's §4: 34/t·sbh with t = 8 is 4.25·sbh.
  EXPECT_EQ(ActivationBytesPerLayer(m, b, t, true, Recompute::kSelective), 106954752u);
}

TEST(GenModel, ZeroModelStatesPerRajbhandariFigure1) {
  // Ψ = 7.5 B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
  const uint64_t psi = 7'500'000'000;
  EXPECT_EQ(ModelStateBytes(psi, 0, 64), 120'000'000'000u);
  EXPECT_EQ(ModelStateBytes(psi, 1, 64), 30'000'000'000u + 1'406'250'000u);
  EXPECT_EQ(ModelStateBytes(psi, 2, 64), 15'000'000'000u + 1'640'625'000u);
  EXPECT_EQ(ModelStateBytes(psi, 3, 64), 1'875'000'000u);
}

TEST(GenModel, BubbleFraction) {
  EXPECT_DOUBLE_EQ(BubbleFraction(8, 32), 7.0 / 39.0);
  EXPECT_DOUBLE_EQ(BubbleFraction(1, 4), 0.0);
}

TEST(GenModel, YamlReaderDefaultsAndStrictness) {
  TempDir d;
  d.Write("m.yml", "name: small\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 128\nseq_len: 16\ngated_ffn: true\n");
  auto m = ReadModelYaml(d.File("m.yml"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->ffn, 256);
  EXPECT_EQ(m->kv_heads, 4);
  EXPECT_EQ(m->head_dim, 16);
  EXPECT_TRUE(m->gated_ffn);

  d.Write("bad1.yml", "layers: 2\nhidden: 64\nheads: 4\nvocab: 128\nseq_len: 16\nhiden_size: 3\n");
  auto b1 = ReadModelYaml(d.File("bad1.yml"));
  ASSERT_FALSE(b1.ok());
  EXPECT_NE(b1.status().message().find("bad1.yml:6: hiden_size"), std::string::npos) << b1.status().message();
  EXPECT_NE(b1.status().message().find("unknown key"), std::string::npos) << b1.status().message();

  d.Write("bad2.yml", "layers: 2\nhidden: 64x\nheads: 4\nvocab: 128\nseq_len: 16\n");
  auto b2 = ReadModelYaml(d.File("bad2.yml"));
  ASSERT_FALSE(b2.ok());
  EXPECT_NE(b2.status().message().find("bad2.yml:2: hidden"), std::string::npos) << b2.status().message();

  d.Write("bad3.yml", "layers: 0\nhidden: 64\nheads: 4\nvocab: 128\nseq_len: 16\n");
  auto b3 = ReadModelYaml(d.File("bad3.yml"));
  ASSERT_FALSE(b3.ok());
  EXPECT_NE(b3.status().message().find("bad3.yml:1: layers"), std::string::npos) << b3.status().message();

  d.Write("bad4.yml", "layers: 2\nhidden: 64\nheads: 4\nkv_heads: 3\nvocab: 128\nseq_len: 16\n");
  auto b4 = ReadModelYaml(d.File("bad4.yml"));
  ASSERT_FALSE(b4.ok());
  EXPECT_NE(b4.status().message().find("not a multiple of kv_heads = 3"), std::string::npos) << b4.status().message();

  d.Write("bad5.yml", "layers: 2\nhidden: 64\nheads: 4\nvocab: 128\n");
  auto b5 = ReadModelYaml(d.File("bad5.yml"));
  ASSERT_FALSE(b5.ok());
  EXPECT_NE(b5.status().message().find("missing required key 'seq_len'"), std::string::npos);
}

TEST(GenModel, UnknownPresetSuggests) {
  auto m = LoadModel("gpt3-175");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("did you mean 'gpt3-175b'"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace orrery::gen
