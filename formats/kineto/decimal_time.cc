#include "formats/kineto/decimal_time.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace moetrace {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' ||
                        s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' ||
                        s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Exponent forms are rare: go through long double (64-bit mantissa), which
// is exact for any realistic timestamp.
DecimalStatus ViaLongDouble(std::string_view s, int64_t* ns) {
  std::string tmp(s);
  char* endp = nullptr;
  long double v = strtold(tmp.c_str(), &endp);
  if (endp != tmp.c_str() + tmp.size()) return DecimalStatus::kNotANumber;
  long double x = std::round(v * 1000.0L);
  if (!(x >= -9.2e18L && x <= 9.2e18L)) return DecimalStatus::kOutOfRange;
  *ns = static_cast<int64_t>(x);
  return DecimalStatus::kOk;
}

}  // namespace

DecimalStatus MicrosToNanos(std::string_view text, int64_t* ns, bool* integral) {
  std::string_view s = Trim(text);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    neg = s[i] == '-';
    ++i;
  }
  size_t int_start = i;
  uint64_t whole = 0;
  while (i < s.size() && IsDigit(s[i])) {
    if (whole > (uint64_t(std::numeric_limits<int64_t>::max()) / 1000 - 9) / 10) {
      return DecimalStatus::kOutOfRange;
    }
    whole = whole * 10 + uint64_t(s[i] - '0');
    ++i;
  }
  bool has_int = i > int_start;
  uint64_t frac = 0;  // nanoseconds
  int frac_digits = 0;
  bool round_up = false;
  bool has_frac = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t fs = i;
    while (i < s.size() && IsDigit(s[i])) {
      if (frac_digits < 3) {
        frac = frac * 10 + uint64_t(s[i] - '0');
        ++frac_digits;
      } else if (frac_digits == 3) {
        round_up = s[i] >= '5';
        ++frac_digits;
      }
      ++i;
    }
    has_frac = i > fs;
    if (!has_int && !has_frac) return DecimalStatus::kNotANumber;
  } else if (!has_int) {
    return DecimalStatus::kNotANumber;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    *integral = false;
    return ViaLongDouble(s, ns);
  }
  if (i != s.size()) return DecimalStatus::kNotANumber;
  for (int d = frac_digits; d < 3; ++d) frac *= 10;
  uint64_t total = whole * 1000 + frac + (round_up ? 1 : 0);
  if (total > uint64_t(std::numeric_limits<int64_t>::max())) return DecimalStatus::kOutOfRange;
  *ns = neg ? -int64_t(total) : int64_t(total);
  *integral = s.find('.') == std::string_view::npos;
  return DecimalStatus::kOk;
}

bool ParseIntegerText(std::string_view text, int64_t* out) {
  std::string_view s = Trim(text);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    neg = s[i] == '-';
    ++i;
  }
  size_t start = i;
  uint64_t v = 0;
  while (i < s.size() && IsDigit(s[i])) {
    if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - 9) / 10) return false;
    v = v * 10 + uint64_t(s[i] - '0');
    ++i;
  }
  if (i == start) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  if (i != s.size()) return false;
  *out = neg ? -int64_t(v) : int64_t(v);
  return true;
}

}  // namespace moetrace
