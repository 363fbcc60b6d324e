// Device presets: the system JSON they write (read back by the system
// configuration reader), the efficiency knob, the capacity they set, errors.
#include <gtest/gtest.h>

#include <sstream>

#include "extern/astra_config.h"
#include "gen/device.h"
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

}  // namespace
}  // namespace orrery::gen
