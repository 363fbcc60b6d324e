#include "core/limits.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(Limits, ProductWithinStopsAtTheFactorThatPassesTheLimit) {
  EXPECT_EQ(ProductWithin({8, 1, 16, 4}, 512), 512);
  EXPECT_EQ(ProductWithin({}, 1), 1);
  size_t broke = 99;
  EXPECT_EQ(ProductWithin({8, 1, 16, 5}, 512, &broke), -1);
  EXPECT_EQ(broke, 3u);
  // Past int64 without forming the product (UBSan would report signed overflow).
  EXPECT_EQ(ProductWithin({int64_t{1} << 40, int64_t{1} << 40, 2}, INT64_MAX, &broke), -1);
  EXPECT_EQ(broke, 1u);
  EXPECT_EQ(ProductWithin({4, -1}, 100, &broke), -1);
  EXPECT_EQ(broke, 1u);
}

TEST(Limits, CheckedProductNamesFactorsProductAndLimit) {
  auto r = CheckedProduct({{"tp", 8}, {"dp", 16777216}, {"pp", 96}}, kMaxNpus, Where{}, "at most 67108864 NPUs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "tp·dp·pp = 8·16777216·96 = 12884901888: above 67108864 from dp on; allowed: at most 67108864 NPUs");
  auto big = CheckedProduct({{"vocab", int64_t{1} << 40, 3}, {"hidden", int64_t{1} << 40, 7}}, int64_t{1} << 50,
                            Where{"m.yml", 0, ""}, "x");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "m.yml:7: vocab·hidden = 1099511627776·1099511627776 = about 1.2e+24: above 1125899906842624 from hidden "
            "on; allowed: x");
  auto keyed = CheckedProduct({{"a", 3}, {"b", 5}}, 10, Where{"f", 2, "size"}, "y");
  ASSERT_FALSE(keyed.ok());
  EXPECT_EQ(keyed.status().message(), "f:2: size = a·b = 3·5 = 15: above 10 from b on; allowed: y");
  auto ok = CheckedProduct({{"a", 3}, {"b", 5}}, 15, Where{}, "y");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), 15);
}

}  // namespace
}  // namespace orrery
