#include "core/parse.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace orrery {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// A whole number below 10^17 in full (99999999000000), anything else in the
// shortest text that reads back as `v` (0.96, not 0.95999999999999996; 1e+300).
std::string FormatDouble(double v) {
  char buf[40];
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e17) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string ShortG(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status Bad(const Where& where, const std::string& shown_value, const std::string& what, const std::string& allowed) {
  return Status::Invalid(where.Describe() + " = " + shown_value + ": " + what + "; allowed: " + allowed);
}

// The value as written, quoted; a very long one is cut (the message stays one readable line).
std::string Quote(std::string_view text) {
  constexpr size_t kMaxShown = 40;
  std::string out;
  out.reserve(std::min(text.size(), kMaxShown) + 16);
  out.push_back('"');
  if (text.size() > kMaxShown) {
    out.append(text.substr(0, kMaxShown));
    out += "...\" (" + std::to_string(text.size()) + " characters)";
    return out;
  }
  out.append(text);
  out.push_back('"');
  return out;
}

}  // namespace

Status ValueError(const Where& where, const std::string& shown_value, const std::string& what,
                  const std::string& allowed) {
  return Bad(where, shown_value, what, allowed);
}

std::string Where::Describe() const {
  std::string out = file;
  if (line > 0) out += (out.empty() ? "line " : ":") + std::to_string(line);
  if (!key.empty()) out += (out.empty() ? "" : ": ") + key;
  return out.empty() ? "value" : out;
}

std::string DescribeRange(DoubleRange r) {
  std::string lo = r.min_exclusive ? "a number > " + ShortG(r.min) : "a number >= " + ShortG(r.min);
  if (r.max >= std::numeric_limits<double>::max()) return lo + " (finite)";
  return lo + " and <= " + ShortG(r.max);
}

std::string DescribeIntRange(int64_t min, int64_t max) {
  return "an integer >= " + std::to_string(min) + " and <= " + std::to_string(max);
}

std::string DescribeUintRange(uint64_t min, uint64_t max) {
  return "an integer >= " + std::to_string(min) + " and <= " + std::to_string(max);
}

Status CheckDouble(double value, const Where& where, DoubleRange range) {
  const std::string shown = FormatDouble(value);
  if (!std::isfinite(value)) return Bad(where, shown, "not a finite number", DescribeRange(range));
  const bool below = range.min_exclusive ? value <= range.min : value < range.min;
  if (below || value > range.max) return Bad(where, shown, "out of range", DescribeRange(range));
  return Status::Ok();
}

Result<double> ParseDouble(std::string_view text, const Where& where, DoubleRange range) {
  const std::string_view t = Trim(text);
  // The message's parts are made only for an error (filters parse every point's values).
  auto bad = [&](const std::string& what) { return Bad(where, Quote(text), what, DescribeRange(range)); };
  if (t.empty()) return bad("empty");
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ptr == t.data()) return bad("not a number");
  if (ec == std::errc::result_out_of_range) return bad("out of the range of a double");
  if (ptr != t.data() + t.size()) {
    return bad("not a number (trailing " + Quote(std::string_view(ptr, t.data() + t.size() - ptr)) + ")");
  }
  if (!std::isfinite(value)) return bad("not a finite number");
  const bool below = range.min_exclusive ? value <= range.min : value < range.min;
  if (below || value > range.max) return bad("out of range");
  return value;
}

Result<int64_t> DoubleToInt(double value, const Where& where, int64_t min, int64_t max) {
  const std::string allowed = DescribeIntRange(min, max);
  const std::string shown = FormatDouble(value);
  if (!std::isfinite(value)) return Bad(where, shown, "not a finite number", allowed);
  if (value != std::floor(value)) return Bad(where, shown, "not an integer", allowed);
  if (value < -9223372036854775808.0 || value >= 9223372036854775808.0)
    return Bad(where, shown, "out of range", allowed);
  const auto i = static_cast<int64_t>(value);
  if (i < min || i > max) return Bad(where, shown, "out of range", allowed);
  return i;
}

Result<uint64_t> DoubleToUint(double value, const Where& where, uint64_t min, uint64_t max) {
  auto bad = [&](const char* what) { return Bad(where, FormatDouble(value), what, DescribeUintRange(min, max)); };
  if (!std::isfinite(value)) return bad("not a finite number");
  if (value != std::floor(value)) return bad("not an integer");
  if (value < 0 || value >= 18446744073709551616.0) return bad("out of range");
  const auto u = static_cast<uint64_t>(value);
  if (u < min || u > max) return bad("out of range");
  return u;
}

namespace {

// Integer text, or an exponent/decimal form that is an exact integer ("10e9", "1.5e3").
template <typename Int>
Result<Int> ParseInteger(std::string_view text, const Where& where, Int min, Int max, const std::string& allowed) {
  const std::string_view t = Trim(text);
  if (t.empty()) return Bad(where, Quote(text), "empty", allowed);
  Int value = 0;
  const char* end = t.data() + t.size();
  const auto [ptr, ec] = std::from_chars(t.data(), end, value);
  if (ptr == t.data()) return Bad(where, Quote(text), "not an integer", allowed);
  if (ptr == end) {
    if (ec == std::errc::result_out_of_range || value < min || value > max) {
      return Bad(where, Quote(text), "out of range", allowed);
    }
    return value;
  }
  if (*ptr == '.' || *ptr == 'e' || *ptr == 'E') {
    double d = 0;
    const auto [dptr, dec] = std::from_chars(t.data(), end, d);
    if (dptr == end && dec == std::errc()) {
      if (!std::isfinite(d)) return Bad(where, Quote(text), "not a finite number", allowed);
      if (d != std::floor(d)) return Bad(where, Quote(text), "not an integer", allowed);
      const double lo = static_cast<double>(min), hi = static_cast<double>(max);
      if (d < lo || d > hi || d >= 18446744073709551616.0 || (std::is_signed_v<Int> && d >= 9223372036854775808.0)) {
        return Bad(where, Quote(text), "out of range", allowed);
      }
      const Int v = static_cast<Int>(d);
      if (v < min || v > max) return Bad(where, Quote(text), "out of range", allowed);
      return v;
    }
    if (dec == std::errc::result_out_of_range) return Bad(where, Quote(text), "out of range", allowed);
  }
  return Bad(where, Quote(text), "not an integer (trailing " + Quote(std::string_view(ptr, end - ptr)) + ")", allowed);
}

}  // namespace

Result<int64_t> ParseInt(std::string_view text, const Where& where, int64_t min, int64_t max) {
  return ParseInteger<int64_t>(text, where, min, max, DescribeIntRange(min, max));
}

Result<uint64_t> ParseUint(std::string_view text, const Where& where, uint64_t min, uint64_t max) {
  const std::string_view t = Trim(text);
  if (!t.empty() && t.front() == '-') {
    return Bad(where, Quote(text), "negative", DescribeUintRange(min, max));
  }
  return ParseInteger<uint64_t>(text, where, min, max, DescribeUintRange(min, max));
}

}  // namespace orrery
