// A generated run's report (docs/report.md, "A generated run"): model and
// hardware FLOPs, MFU and HFU over the device's peak, tokens per second and the
// generator's memory per rank. Every expected value is derived by hand below
// from the published FLOP counts (Korthikanti et al. 2022, §6; Narayanan et al.
// 2021) and the roofline's per-node times.
#include <gtest/gtest.h>

#include "gen/gen_source.h"
#include "gen/model.h"
#include "gen/summary.h"
#include "run/examples.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

// One layer, h 64, 4 heads, ffn 4h, V 128, s 16: GPT-shaped (tests/gen/gen_test_util.h's tiny model).
constexpr char kTiny[] = "name: tiny1\nlayers: 1\nhidden: 64\nffn: 256\nheads: 4\nvocab: 128\nseq_len: 16\n";

// The roofline at 1 TFLOP/s, compute-bound; messages of 0 ns (1e9 GB/s, no
// latency, no endpoint delay, the reduction free). `device` (if any) only names
// the peak MFU divides by.
Result<RunReport> RunTiny(const TempDir& d, const std::string& generate, const std::string& device,
                          const std::string& format_check = "") {
  d.Write("tiny.yml", kTiny);
  d.Write("system.json", std::string(R"({"roofline-enabled": 1, "peak-perf": 1, "local-mem-bw": 1000000000,
      "endpoint-delay": 0, "preferred-dataset-splits": 1)") +
                             (device.empty() ? "" : ", \"device\": \"" + device + "\"") + "}");
  auto source = gen::GeneratedSource("--model=" + d.File("tiny.yml") + " " + generate);
  if (!source.ok()) return source.status();
  RunConfig c;
  c.source = source.value();
  c.files.system = d.File("system.json");
  c.files.network = "Ring(2,1000000000GB/s,0ns)";
  return RunSimulation(c, DefaultBackends());
}

// Per microbatch of 1 sequence on one rank (forward; backward is twice):
//   attention: QKV 2·s·h·3h + projection 2·s·h·h + scores and context 4·s²·h
//            = 393216 + 131072 + 65536 = 589824
//   MLP: 2·s·h·4h·2 = 1048576;  logits: 2·s·h·V = 262144.
// At 1 TFLOP/s a node takes trunc(ops / 1000) ns: 589 + 1048 + 262 forward,
// 524 + 2097 + 1179 backward: T = 5699 ns (the gradient all-reduce takes 0 ns).
// DP 2, one microbatch: B = 2 sequences. Model FLOPs (Korthikanti et al. 2022,
// §6, no recomputation): 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))
//   = 72·B·s·l·h² + 12·B·s²·l·h + 6·B·s·h·V = 9437184 + 393216 + 1572864 = 11403264,
// and without recomputation the hardware FLOPs are the same.
// MFU = 11403264 / (2 NPUs x 312e12 FLOP/s x 5699e-9 s); tokens/s = 2·16 / 5699e-9.
TEST(GeneratedMetrics, MfuHfuTokensByHand) {
  TempDir d;
  auto r = RunTiny(d, "--dp=2 --microbatches=1", "a100");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const GeneratedReport& g = r->generated;
  ASSERT_TRUE(g.present);
  EXPECT_EQ(testing::MaxFinished(r.value()), 5699u);
  EXPECT_EQ(g.model_flops, "11403264");
  EXPECT_EQ(g.hardware_flops, "11403264");
  EXPECT_EQ(g.device, "a100");
  EXPECT_EQ(g.peak_tflops, 312);
  ASSERT_TRUE(g.mfu && g.hfu);
  const double mfu = 11403264.0 / (2 * 312e12 * 5699e-9);
  EXPECT_NEAR(*g.mfu, mfu, 1e-15);
  EXPECT_NEAR(*g.hfu, mfu, 1e-15);
  EXPECT_EQ(g.tokens_per_iteration, 32u);
  ASSERT_TRUE(g.tokens_per_s);
  EXPECT_NEAR(*g.tokens_per_s, 32 / 5699e-9, 1e-6);
  // The memory line is the generator's closed form (gen/summary.h, tested against
  // Korthikanti et al. there) for the one stage.
  auto model = gen::LoadModel(d.File("tiny.yml"));
  ASSERT_TRUE(model.ok());
  gen::Strategy s;
  s.dp = 2;
  s.microbatches = 1;
  EXPECT_EQ(g.memory_bytes, gen::StageMemory(model.value(), s, 0).total_bytes);
  EXPECT_EQ(g.memory_stage, 0);
  const std::string text = FormatReportText(r.value());
  // 11403264 / 3556176000 = 0.32066...%
  EXPECT_NE(text.find("\n  model FLOPs 11403264, hardware FLOPs 11403264 (recomputation included)\n"
                      "  MFU 0.3%, HFU 0.3% of 2 x a100 (312 TFLOP/s peak, from the system configuration)\n"
                      "  tokens/s 5615020.2 (32 tokens per iteration)\n"),
            std::string::npos)
      << text;
  const std::string json = FormatReportJson(r.value());
  EXPECT_NE(json.find("\"model_flops\": \"11403264\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"device\": \"a100\""), std::string::npos);
}

// Full recomputation runs each layer's forward again before its backward:
// hardware FLOPs add 2 ranks x (589824 + 1048576) = 3276800 (the logits are not
// recomputed), 14680064 in all, i.e. Korthikanti's 96·B·s·l·h²·(1 + s/(6h) +
// V/(16·l·h)) = 12582912 + 524288 + 1572864 = 14680064; model FLOPs do not
// change. Time: 5699 + 589 + 1048 = 7336 ns. HFU/MFU = 14680064/11403264.
TEST(GeneratedMetrics, RecomputationCountsInHfuNotMfu) {
  TempDir d;
  auto r = RunTiny(d, "--dp=2 --microbatches=1 --recompute=full", "h100");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const GeneratedReport& g = r->generated;
  EXPECT_EQ(testing::MaxFinished(r.value()), 7336u);
  EXPECT_EQ(g.model_flops, "11403264");
  EXPECT_EQ(g.hardware_flops, "14680064");
  ASSERT_TRUE(g.mfu && g.hfu);
  EXPECT_NEAR(*g.mfu, 11403264.0 / (2 * 989.5e12 * 7336e-9), 1e-15);
  EXPECT_NEAR(*g.hfu, 14680064.0 / (2 * 989.5e12 * 7336e-9), 1e-15);
}

// Without a device the peak is unknown: MFU and HFU are absent (not 0), and the
// report says why; the FLOPs, tokens and memory are still there.
TEST(GeneratedMetrics, WithoutADeviceMfuIsAbsentAndTheReportSaysWhy) {
  TempDir d;
  auto r = RunTiny(d, "--dp=2 --microbatches=1", "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const GeneratedReport& g = r->generated;
  EXPECT_FALSE(g.mfu);
  EXPECT_FALSE(g.hfu);
  EXPECT_EQ(g.model_flops, "11403264");
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("\n  MFU, HFU: not reported: the system configuration names no device (orrery gen "
                      "--device=NAME --system-out=F.json writes one)\n"),
            std::string::npos)
      << text;
  const std::string json = FormatReportJson(r.value());
  EXPECT_NE(json.find("\"mfu\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"mfu_note\": \"the system configuration names no device"), std::string::npos) << json;
  // The generator's own --device stands in when the system configuration names none (it
  // also turns on the generator's kernel model, so the time differs: MFU by its definition).
  auto with_flag = RunTiny(d, "--dp=2 --microbatches=1 --device=a100", "");
  ASSERT_TRUE(with_flag.ok()) << with_flag.status().message();
  ASSERT_TRUE(with_flag->generated.mfu);
  EXPECT_EQ(with_flag->generated.device, "a100");
  const double t = static_cast<double>(testing::MaxFinished(with_flag.value())) * 1e-9;
  EXPECT_NEAR(*with_flag->generated.mfu, 11403264.0 / (2 * 312e12 * t), 1e-12 * *with_flag->generated.mfu);
  EXPECT_NE(FormatReportText(with_flag.value()).find("(312 TFLOP/s peak, from the generator's --device)"),
            std::string::npos);
}

// Trace files carry no generator figures: no "generated" section at all.
TEST(GeneratedMetrics, TraceRunsHaveNoGeneratedSection) {
  TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("default", d.path(), &c).ok());
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->generated.present);
  EXPECT_EQ(FormatReportJson(r.value()).find("\"generated\""), std::string::npos);
  EXPECT_EQ(FormatReportText(r.value()).find("generated workload"), std::string::npos);
}

// The system JSON's "device" names a preset; anything else is refused with the
// file, the key, the value and the valid names.
TEST(GeneratedMetrics, UnknownDeviceInTheSystemJsonIsAnError) {
  TempDir d;
  auto r = RunTiny(d, "--dp=2 --microbatches=1", "a10");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.status().message(),
      d.File("system.json") +
          ": \"device\" = \"a10\": unknown device (did you mean 'a100'?); valid: a100, h100 or a device YAML file");
  d.Write("system.json", R"({"device": ""})");
  RunConfig c;
  c.source = gen::GeneratedSource("--model=" + d.File("tiny.yml") + " --dp=2 --microbatches=1").value();
  c.files.system = d.File("system.json");
  c.files.network = "Ring(2,100GB/s,0ns)";
  auto blank = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(blank.ok());
  EXPECT_NE(blank.status().message().find("system.json: \"device\" = \"\": empty"), std::string::npos)
      << blank.status().message();
  d.Write("system.json", R"({"device": 3})");
  auto number = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.status().message().find("device"), std::string::npos) << number.status().message();
}

// A device YAML file (gen/device.h) is named by its path, in the system JSON as
// to --device: `base: a100` with peak_tflops 400 divides by 400 TFLOP/s, not
// the base's 312. One layer as above, T = 5699 ns (the roofline is the system's).
TEST(GeneratedMetrics, DeviceYamlFileGivesItsOwnPeak) {
  TempDir d;
  d.Write("dev.yml", "base: a100\npeak_tflops: 400\n");
  auto r = RunTiny(d, "--dp=2 --microbatches=1", d.File("dev.yml"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->generated.mfu);
  EXPECT_EQ(r->generated.device, d.File("dev.yml"));
  EXPECT_EQ(r->generated.peak_tflops, 400);
  EXPECT_NEAR(*r->generated.mfu, 11403264.0 / (2 * 400e12 * 5699e-9), 1e-15);
  auto missing = RunTiny(d, "--dp=2 --microbatches=1", d.File("none.yml"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().rfind(d.File("system.json") + ": \"device\": ", 0), 0u)
      << missing.status().message();
}

// `orrery gen --device --system-out` records the device, so a run on that
// file reports MFU with no further flag.
TEST(GeneratedMetrics, GenSystemOutRecordsTheDevice) {
  TempDir d;
  std::string err;
  ASSERT_EQ(testing::RunCli("gen --device=a100 --efficiency=0.5 --system-out=" + d.File("sys.json"), &err), 0) << err;
  const std::string sys = testing::ReadFileText(d.File("sys.json"));
  EXPECT_NE(sys.find("\"device\": \"a100\""), std::string::npos) << sys;
  d.Write("tiny.yml", kTiny);
  std::string out;
  ASSERT_EQ(testing::RunCliCapture("run --generate=\"--model=" + d.File("tiny.yml") +
                                       " --dp=2 --microbatches=1\" --system-configuration=" + d.File("sys.json") +
                                       " --network-configuration=\"Ring(2,100GB/s,500ns)\"",
                                   &out, &err),
            0)
      << err;
  EXPECT_NE(out.find(" of 2 x a100 (312 TFLOP/s peak, from the system configuration)\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace orrery
