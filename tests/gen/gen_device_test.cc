// Device presets: the system JSON they write (read back by the system
// configuration reader), the efficiency knob, the capacity they set, errors.
#include <gtest/gtest.h>

#include <sstream>

#include "extern/astra_config.h"
#include "gen/device.h"
#include "gen/kernels.h"
#include "gen/gen_args.h"
#include "gen/generate.h"
#include "tests/test_util.h"

namespace orrery::gen {
namespace {

TEST(GenDevice, SystemJsonFromTheSpecSheetTimesTheEfficiency) {
  orrery::testing::TempDir d;
  std::ostringstream out, err;
  ASSERT_EQ(orrery::RunGenCommand({"--device=h100", "--efficiency=0.5", "--system-out=" + d.File("sys.json")}, out,
                                  err),
            0)
      << err.str();
  auto sys = ReadAstraSystemJson(d.File("sys.json"), {});
  ASSERT_TRUE(sys.ok()) << sys.status().message();
  EXPECT_TRUE(sys->roofline_enabled);
  EXPECT_DOUBLE_EQ(sys->peak_perf_tflops, 989.5 * 0.5);  // 1,979 TFLOPS with sparsity, halved for dense
  EXPECT_DOUBLE_EQ(sys->local_mem_bw, 3350);
  auto a100 = FindDevice("a100");
  ASSERT_TRUE(a100.ok());
  EXPECT_DOUBLE_EQ(a100->peak_tflops, 312);
  EXPECT_DOUBLE_EQ(a100->hbm_gbps, 2039);
}

TEST(GenDevice, DeviceSetsTheCapacityUnlessHbmIsGiven) {
  auto o = ParseGenArgs({"--model=gpt3-175b", "--device=a100"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->hbm_bytes, 80'000'000'000u);
  auto o2 = ParseGenArgs({"--model=gpt3-175b", "--device=a100", "--hbm-gb=40"});
  ASSERT_TRUE(o2.ok());
  EXPECT_EQ(o2->hbm_bytes, 40'000'000'000u);
}

TEST(GenDevice, BadDeviceFlags) {
  auto unknown = ParseGenArgs({"--model=gpt3-175b", "--device=h10"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find(
                "--device = h10: unknown device (did you mean 'h100'?); allowed: a100, h100"),
            std::string::npos)
      << unknown.status().message();
  auto eff = ParseGenArgs({"--model=gpt3-175b", "--device=h100", "--efficiency=1.5"});
  ASSERT_FALSE(eff.ok());
  EXPECT_NE(eff.status().message().find("--efficiency"), std::string::npos) << eff.status().message();
  auto lone = ParseGenArgs({"--model=gpt3-175b", "--efficiency=0.5"});
  ASSERT_FALSE(lone.ok());
  EXPECT_NE(lone.status().message().find("needs a device"), std::string::npos) << lone.status().message();
  std::ostringstream out, err;
  EXPECT_EQ(orrery::RunGenCommand({"--list-devices"}, out, err), 0);
  EXPECT_NE(out.str().find("h100: 989.5 TFLOP/s dense BF16, HBM 3350 GB/s, 80 GB"), std::string::npos) << out.str();
}

// A device file: a preset's values, then the file's; every rule's message
// names the file, the line and the key.
TEST(GenDevice, DeviceFilesOverrideAPresetAndNameTheirErrors) {
  orrery::testing::TempDir d;
  d.Write("dev.yml", "base: a100\ngemm_efficiency: 0.5\nsms: 54\n");
  auto dev = FindDevice(d.File("dev.yml"));
  ASSERT_TRUE(dev.ok()) << dev.status().message();
  EXPECT_DOUBLE_EQ(dev->peak_tflops, 312);            // from the base
  EXPECT_DOUBLE_EQ(dev->model.gemm_efficiency, 0.5);  // from the file
  EXPECT_EQ(dev->model.sms, 54);
  EXPECT_DOUBLE_EQ(dev->model.memory_efficiency, 0.88);
  // The attention core: a file's value holds at every length, the other direction stays the base's
  // at 2,048 tokens (A100: 0.565 backward, FlashAttention paper's Megatron rows; docs/generator.md).
  d.Write("dev.yml", "base: a100\nattention_forward_efficiency: 0.5\nattention_dropout_efficiency: 0.6\n");
  auto att = FindDevice(d.File("dev.yml"));
  ASSERT_TRUE(att.ok()) << att.status().message();
  for (uint64_t s : {512u, 2048u, 8192u}) {
    EXPECT_DOUBLE_EQ(AttentionEfficiency(att->model, s, false), 0.5) << s;
    EXPECT_DOUBLE_EQ(AttentionEfficiency(att->model, s, true), 0.565) << s;
  }
  EXPECT_DOUBLE_EQ(att->model.attention_dropout_efficiency, 0.6);
  d.Write("dev.yml",
          "base: a100\nlayernorm_persistent_forward_efficiency: 0.7\nlayernorm_apex_forward_efficiency: 0.2\n");
  auto ln = FindDevice(d.File("dev.yml"));
  ASSERT_TRUE(ln.ok()) << ln.status().message();
  EXPECT_DOUBLE_EQ(ln->model.layernorm_persistent.forward, 0.7);
  EXPECT_DOUBLE_EQ(ln->model.layernorm_apex.forward, 0.2);
  EXPECT_DOUBLE_EQ(ln->model.layernorm_apex.backward, 0.368);  // the base's
  EXPECT_EQ(ln->model.tile_m, 64);                             // the base's GEMM shape model
  EXPECT_DOUBLE_EQ(ln->model.gemm_k_overhead, 110);
  d.Write("dev.yml", "base: a100\ngemm_k_overhead: 0\ntile_m: 256\ntile_n: 128\n");
  auto flat = FindDevice(d.File("dev.yml"));
  ASSERT_TRUE(flat.ok()) << flat.status().message();
  EXPECT_DOUBLE_EQ(flat->model.gemm_k_overhead, 0);  // no depth term
  EXPECT_EQ(flat->model.tile_m, 256);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"base: a100\ngemm_eficiency: 0.5\n", "dev.yml:2: gemm_eficiency: unknown key"},
      {"base: a100\nattention_backward_efficiency: 0\n",
       "dev.yml:2: attention_backward_efficiency = \"0\": out of range; allowed: a number > 0 and <= 1"},
      {"base: a100\nsms: 10\nsms: 20\n", "dev.yml:3: key 'sms' is given twice (first on line 2)"},
      {"peak_tflops: 100\n", "missing required key 'hbm_gbps' (or give 'base: a100'"},
      {"base: a200\n", "dev.yml:1: base = a200: unknown device preset; allowed: a100, h100"},
      {"base: a100\nmemory_efficiency: 1.5\n",
       "dev.yml:2: memory_efficiency = \"1.5\": out of range; allowed: a number > 0 and <= 1"},
      {"base: a100\nsms: 10.5\n", "dev.yml:2: sms = 10.5: not an integer"},
      {"base: a100\nsms: [1, 2]\n", "dev.yml:2: sms = (not a scalar): wrong type"},
      {"base: a100\ncollective_sms: 108\n",
       "dev.yml: collective_sms = 108: not below sms (108); allowed: 0 .. sms - 1"},
      {"base: a100\ncollective_sms: 2.5\n", "dev.yml:2: collective_sms = 2.5: not an integer"},
      {"base: a100\nlayernorm_apex_backward_efficiency: 1.2\n",
       "dev.yml:2: layernorm_apex_backward_efficiency = \"1.2\": out of range; allowed: a number > 0 and <= 1"},
      {"- a100\n", "a device file is a mapping of keys"},
      {"base: a100\ngemm_k_overhead: -1\n",
       "dev.yml:2: gemm_k_overhead = \"-1\": out of range; allowed: a number >= 0 and <= 1e+06"},
  };
  for (const auto& [text, message] : bad) {
    d.Write("dev.yml", text);
    auto r = FindDevice(d.File("dev.yml"));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(message), std::string::npos) << text << "\n" << r.status().message();
  }
  auto missing = FindDevice(d.File("none.yml"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read the device file"), std::string::npos);
}

// With --network the file names every key ASTRA-sim reads (issue 32: without
// algorithm lists ASTRA-sim finishes no rank), one ring per dimension, and the
// group-collective model (--group-collective-model, astra-sim by default).
TEST(GenDevice, SystemOutWritesEveryKeyAstraSimNeeds) {
  orrery::testing::TempDir d;
  std::ostringstream out, err;
  ASSERT_EQ(orrery::RunGenCommand({"--device=a100", "--network=Ring(8,200GB/s,500ns)_Switch(8,25GB/s,2us)",
                                   "--system-out=" + d.File("sys.json")},
                                  out, err),
            0)
      << err.str();
  auto j = nlohmann::json::parse(orrery::testing::ReadFileText(d.File("sys.json")));
  for (const char* key :
       {"scheduling-policy", "endpoint-delay", "active-chunks-per-dimension", "preferred-dataset-splits",
        "collective-optimization", "local-mem-bw", "roofline-enabled", "peak-perf"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"all-reduce-implementation", "all-gather-implementation", "reduce-scatter-implementation",
                          "all-to-all-implementation"}) {
    EXPECT_EQ(j[key], nlohmann::json::parse(R"(["ring", "ring"])")) << key;
  }
  EXPECT_EQ(j["group-collective-model"], "astra-sim");
  auto sys = ReadAstraSystemJson(d.File("sys.json"), {});
  ASSERT_TRUE(sys.ok()) << sys.status().message();
  EXPECT_EQ(sys->all_to_all.size(), 2u);
  EXPECT_EQ(sys->active_chunks_per_dimension, 1);
  EXPECT_FALSE(sys->local_bw_aware);

  std::ostringstream out2, err2;
  ASSERT_EQ(orrery::RunGenCommand({"--device=a100", "--network=Ring(8,200GB/s,500ns)_Switch(8,25GB/s,2us)",
                                   "--group-collective-model=hierarchical", "--system-out=" + d.File("h.json")},
                                  out2, err2),
            0)
      << err2.str();
  auto h = ReadAstraSystemJson(d.File("h.json"), {});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->group_collective_model, "hierarchical");
  // ASTRA-sim's model: collectives take no SMs.
  EXPECT_FALSE(j.contains("collective-sm-fraction"));
  // The hierarchical model reduces a multi-dimension all-reduce's share across the upper
  // dimensions only (localBWAware, as NCCL's rings move the bytes); ASTRA-sim's keeps baseline.
  EXPECT_TRUE(h->local_bw_aware);
  // and NCCL's collectives hold 16 of the A100's 108 SMs (docs/generator.md, "Compute model").
  EXPECT_DOUBLE_EQ(h->collective_sm_fraction, 16.0 / 108);

  // Without --network there is no dimension count: no lists, and the line says so.
  std::ostringstream out3, err3;
  ASSERT_EQ(orrery::RunGenCommand({"--device=a100", "--system-out=" + d.File("n.json")}, out3, err3), 0);
  EXPECT_NE(out3.str().find("no algorithm lists: ASTRA-sim needs them, give --network to write ring per dimension"),
            std::string::npos)
      << out3.str();
  EXPECT_FALSE(
      nlohmann::json::parse(orrery::testing::ReadFileText(d.File("n.json"))).contains("all-reduce-implementation"));
}

TEST(GenDevice, BadGroupCollectiveModelFlags) {
  auto bad = ParseGenArgs({"--device=a100", "--system-out=s.json", "--group-collective-model=flat"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--group-collective-model = flat: unknown group-collective model; allowed: "
                                        "astra-sim (ASTRA-sim's rules) or hierarchical (Orrery's per-dimension model)"),
            std::string::npos)
      << bad.status().message();
  auto alone = ParseGenArgs({"--model=gpt3-175b", "--group-collective-model=hierarchical"});
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("--group-collective-model together with --system-out=F.json"),
            std::string::npos)
      << alone.status().message();
}

}  // namespace
}  // namespace orrery::gen
