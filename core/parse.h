// The one checked routine every number in every input goes through: config
// files (YAML, JSON), notation strings, trace attributes and command-line
// flags. A number is accepted only when the whole text is the number (no
// trailing unit or word), it is finite, and it lies in the range the caller
// states; otherwise the error names where the value came from, the value and
// what is allowed:
//   net.yml:4: bandwidth = "1.6TB/s": not a number (trailing "TB/s"); allowed: a number > 0 and <= 1e+09
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

namespace orrery {

// Where a value came from. Any part may be empty/0; Describe() joins what is set:
// "net.yml:4: bandwidth", "sys.json: endpoint-delay", "--remote-timeout-ms".
struct Where {
  std::string file;
  int line = 0;  // 1-based; 0 when the format has no lines
  std::string key;
  std::string Describe() const;
};

// A closed range [min, max], or (min, max] when min_exclusive (bandwidths, rates).
struct DoubleRange {
  double min = 0;
  double max = std::numeric_limits<double>::max();
  bool min_exclusive = false;
};
inline constexpr DoubleRange kPositive{0, 1e18, true};      // strictly positive, finite
inline constexpr DoubleRange kNonNegative{0, 1e18, false};  // zero allowed, finite

// Parses a finite double in `range` from the whole of `text` (surrounding
// ASCII spaces are ignored).
Result<double> ParseDouble(std::string_view text, const Where& where, DoubleRange range);
// Checks a double some library already parsed (JSON, YAML): finite and in range.
Status CheckDouble(double value, const Where& where, DoubleRange range);

// Parses an integer in [min, max] from the whole of `text`. Exponent forms that
// denote an exact integer ("10e9") are accepted; fractions ("2.5") are not.
Result<int64_t> ParseInt(std::string_view text, const Where& where, int64_t min, int64_t max);
Result<uint64_t> ParseUint(std::string_view text, const Where& where, uint64_t min, uint64_t max);

// Converts a double (from JSON, a trace attribute, a computation) to an integer
// in [min, max]: NaN, infinities, fractions and out-of-range values are errors.
Result<int64_t> DoubleToInt(double value, const Where& where, int64_t min, int64_t max);
Result<uint64_t> DoubleToUint(double value, const Where& where, uint64_t min, uint64_t max);

// The one message format: "<where> = <shown value>: <what is wrong>; allowed: <allowed>".
// For readers that find a wrong type or an inconsistency themselves.
Status ValueError(const Where& where, const std::string& shown_value, const std::string& what,
                  const std::string& allowed);

// "a number > 0 and <= 1e+18", "an integer >= 1 and <= 65535": the "allowed" text.
std::string DescribeRange(DoubleRange range);
std::string DescribeIntRange(int64_t min, int64_t max);
std::string DescribeUintRange(uint64_t min, uint64_t max);

}  // namespace orrery

// `lhs = value of expr`, or return its error: for the chains of checked reads.
// Expands to several statements: put it in braces under an `if`.
#define ORRERY_PARSE_CONCAT_(a, b) a##b
#define ORRERY_PARSE_CONCAT(a, b) ORRERY_PARSE_CONCAT_(a, b)
#define ORRERY_PARSE_OR_RETURN(lhs, expr) ORRERY_PARSE_OR_RETURN_(ORRERY_PARSE_CONCAT(parsed_, __LINE__), lhs, expr)
#define ORRERY_PARSE_OR_RETURN_(tmp, lhs, expr) \
  auto tmp = (expr);                            \
  if (!tmp.ok()) return tmp.status();           \
  lhs = std::move(tmp.value())
