// core/units.h: each conversion gives bit for bit what the inline arithmetic
// it replaced gave (the reports depend on it), and the constants are exact.
#include "core/units.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace orrery {
namespace {

// Bit-identical, not merely equal (0.0 and -0.0 differ; so would NaNs).
bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<double> Values() {
  return {0.0, 1.0, 3.0, 0.1, 1.0 / 3, 12.5, 100.0, 123456789.123, 2.5e-7, 7e15, 1e300, -42.75};
}

TEST(Units, ConstantsAreExact) {
  EXPECT_EQ(kBytesPerMiB, 1048576u);
  EXPECT_EQ(kBytesPerGiB, 1073741824u);
  EXPECT_EQ(kBytesPerGB, 1000000000u);
  EXPECT_EQ(kNsPerUs * 1000, kNsPerMs);
  EXPECT_EQ(kNsPerMs * 1000, kNsPerSecond);
  EXPECT_EQ(static_cast<double>(kNsPerSecond), 1e9);
  EXPECT_EQ(static_cast<double>(kBytesPerGiB), 1073741824.0);
}

TEST(Units, ConversionsMatchTheArithmeticTheyReplaced) {
  for (volatile double x : Values()) {
    const double v = x;
    EXPECT_TRUE(Same(GiBpsToBytesPerNs(v), v * 1073741824.0 / 1e9)) << v;
    EXPECT_TRUE(Same(GiBpsToBytesPerSecond(v), v * 1073741824.0)) << v;
    EXPECT_TRUE(Same(BytesPerSecondToGiBps(v), v / 1073741824.0)) << v;
    EXPECT_TRUE(Same(BytesPerNsToBytesPerSecond(v), v * 1e9)) << v;
    EXPECT_TRUE(Same(TflopsToFlopsPerSecond(v), v * 1e12)) << v;
    EXPECT_TRUE(Same(BytesToGiB(v), v / 1073741824.0)) << v;
    EXPECT_TRUE(Same(BytesToGB(v), v / 1e9)) << v;
    EXPECT_TRUE(Same(GBToBytes(v), v * 1e9)) << v;
    EXPECT_TRUE(Same(MiBToBytes(v), v * (1 << 20))) << v;
    EXPECT_TRUE(Same(NsToUs(v), v / 1000.0)) << v;
    EXPECT_TRUE(Same(NsToMs(v), v / 1e6)) << v;
    EXPECT_TRUE(Same(NsToSeconds(v), v / 1e9)) << v;
    EXPECT_TRUE(Same(UsToNs(v), v * 1000.0)) << v;
    EXPECT_TRUE(Same(MsToNs(v), v * 1e6)) << v;
    EXPECT_TRUE(Same(SecondsToNs(v), v * 1e9)) << v;
    EXPECT_TRUE(Same(SecondsToUs(v), v * 1e6)) << v;
    EXPECT_TRUE(Same(SecondsToMs(v), v * 1e3)) << v;
    EXPECT_TRUE(Same(Millions(v), v / 1e6)) << v;
    EXPECT_TRUE(Same(Billions(v), v / 1e9)) << v;
    EXPECT_TRUE(Same(v * kSecondsPerNs, v * 1e-9)) << v;
    EXPECT_TRUE(Same(v / kBitsPerByte, v / 8)) << v;
  }
}

// Why both forms exist: dividing by 1e9 and multiplying by 1e-9 round differently.
TEST(Units, DividingAndMultiplyingByTheInverseDiffer) {
  bool any = false;
  for (int i = 1; i < 1000 && !any; ++i) any = !Same(NsToSeconds(i), i * kSecondsPerNs);
  EXPECT_TRUE(any);
}

}  // namespace
}  // namespace orrery
