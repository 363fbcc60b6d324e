#include "core/parse.h"

#include <gtest/gtest.h>

#include <limits>

namespace orrery {
namespace {

const Where kWhere{"net.yml", 4, "bandwidth"};

TEST(Parse, DoubleAcceptsWholeNumbersOnly) {
  EXPECT_EQ(*ParseDouble("1.5", kWhere, kPositive), 1.5);
  EXPECT_EQ(*ParseDouble(" 2e3 ", kWhere, kPositive), 2000.0);
  const auto unit = ParseDouble("1.6TB/s", kWhere, kPositive);
  ASSERT_FALSE(unit.ok());
  EXPECT_EQ(unit.status().message(),
            "net.yml:4: bandwidth = \"1.6TB/s\": not a number (trailing \"TB/s\"); allowed: a number > 0 and <= 1e+18");
  EXPECT_NE(ParseDouble("abc", kWhere, kPositive).status().message().find("not a number"), std::string::npos);
  EXPECT_NE(ParseDouble("nan", kWhere, kPositive).status().message().find("not a finite number"), std::string::npos);
  EXPECT_NE(ParseDouble("inf", kWhere, kPositive).status().message().find("not a finite number"), std::string::npos);
  EXPECT_NE(ParseDouble("1e400", kWhere, kPositive).status().message().find("out of the range"), std::string::npos);
  EXPECT_NE(ParseDouble("-5", kWhere, kPositive).status().message().find("out of range"), std::string::npos);
  EXPECT_NE(ParseDouble("0", kWhere, kPositive).status().message().find("out of range"), std::string::npos);
  EXPECT_TRUE(ParseDouble("0", kWhere, kNonNegative).ok());
  EXPECT_FALSE(ParseDouble("", kWhere, kNonNegative).ok());
}

TEST(Parse, IntegersRejectFractionsOverflowAndWords) {
  const Where w{"", 0, "--remote-timeout-ms"};
  EXPECT_EQ(*ParseInt("42", w, 1, 100), 42);
  EXPECT_EQ(*ParseUint("10e9", w, 0, UINT64_MAX), 10000000000ull);
  EXPECT_EQ(ParseInt("-5", w, 1, 100).status().message(),
            "--remote-timeout-ms = \"-5\": out of range; allowed: an integer >= 1 and <= 100");
  EXPECT_NE(ParseInt("2.5", w, 0, 100).status().message().find("not an integer"), std::string::npos);
  EXPECT_NE(ParseInt("12abc", w, 0, 100).status().message().find("trailing \"abc\""), std::string::npos);
  EXPECT_NE(ParseInt("99999999999999999999", w, 0, INT64_MAX).status().message().find("out of range"),
            std::string::npos);
  EXPECT_NE(ParseUint("-1", w, 0, UINT64_MAX).status().message().find("negative"), std::string::npos);
  EXPECT_NE(ParseUint("1e20", w, 0, UINT64_MAX).status().message().find("out of range"), std::string::npos);
  EXPECT_NE(ParseInt("1e19", w, INT64_MIN, INT64_MAX).status().message().find("out of range"), std::string::npos);
}

TEST(Parse, DoubleToIntegerConversionsAreChecked) {
  const Where w{"t.0.et", 0, "node 3: comm_size"};
  EXPECT_EQ(*DoubleToUint(1024.0, w, 0, UINT64_MAX), 1024u);
  EXPECT_FALSE(DoubleToUint(-1.0, w, 0, UINT64_MAX).ok());
  EXPECT_FALSE(DoubleToUint(18446744073709551616.0, w, 0, UINT64_MAX).ok());
  EXPECT_FALSE(DoubleToInt(9223372036854775808.0, w, INT64_MIN, INT64_MAX).ok());
  EXPECT_FALSE(DoubleToInt(0.0 / 0.0, w, 0, 10).ok());
  EXPECT_FALSE(DoubleToInt(1.5, w, 0, 10).ok());
  EXPECT_EQ(DoubleToInt(11, w, 0, 10).status().message(),
            "t.0.et: node 3: comm_size = 11: out of range; allowed: an integer >= 0 and <= 10");
  EXPECT_FALSE(CheckDouble(std::numeric_limits<double>::infinity(), w, kPositive).ok());
  EXPECT_TRUE(CheckDouble(5, w, kPositive).ok());
}

TEST(Parse, LongValuesAreCutInTheMessage) {
  const std::string digits(400, '9');
  const std::string m = ParseDouble(digits, kWhere, kPositive).status().message();
  EXPECT_EQ(m, "net.yml:4: bandwidth = \"" + std::string(40, '9') +
                   "...\" (400 characters): out of the range of a double; allowed: a number > 0 and <= 1e+18");
}

TEST(Parse, ValueErrorUsesTheSameFormat) {
  EXPECT_EQ(
      ValueError(Where{"sys.json", 0, "endpoint-delay"}, "\"abc\"", "expected a number, found a string",
                 DescribeUintRange(0, 10))
          .message(),
      "sys.json: endpoint-delay = \"abc\": expected a number, found a string; allowed: an integer >= 0 and <= 10");
}

}  // namespace
}  // namespace orrery
