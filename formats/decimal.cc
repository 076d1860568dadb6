#include "formats/decimal.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace moetrace {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view TrimField(std::string_view s) {
  s = TrimSpaces(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
    s = TrimSpaces(s.substr(1, s.size() - 2));
  }
  return s;
}

DecimalStatus ParseDecimal(std::string_view text, int scale, int64_t* out, bool* integral) {
  std::string_view s = TrimSpaces(text);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  // value = mantissa * 10^exponent; digits that do not fit in the mantissa
  // only matter through the first of them (rounding) or their count.
  uint64_t mantissa = 0;
  int exponent = 0;
  int dropped_first = -1;
  bool any_digit = false;
  bool seen_point = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return DecimalStatus::kNotANumber;
      seen_point = true;
      continue;
    }
    if (!IsDigit(c)) break;
    any_digit = true;
    int d = c - '0';
    if (mantissa <= (UINT64_MAX - 9) / 10) {
      mantissa = mantissa * 10 + d;
      if (seen_point) --exponent;
    } else {
      if (dropped_first < 0) dropped_first = d;
      if (!seen_point) ++exponent;
    }
  }
  if (!any_digit) return DecimalStatus::kNotANumber;
  bool has_exponent = false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    has_exponent = true;
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    int e = 0;
    bool edigit = false;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      edigit = true;
      if (e < 10000) e = e * 10 + (s[i] - '0');
    }
    if (!edigit) return DecimalStatus::kNotANumber;
    exponent += eneg ? -e : e;
  }
  if (i != s.size()) return DecimalStatus::kNotANumber;
  exponent += scale;
  if (exponent < 0) {
    // Drop the digits below 10^0; the last one dropped decides rounding.
    int round_digit = dropped_first >= 0 ? dropped_first : 0;
    if (exponent < -19) {
      mantissa = 0;
      round_digit = 0;
    } else {
      for (int k = 0; k < -exponent; ++k) {
        round_digit = static_cast<int>(mantissa % 10);
        mantissa /= 10;
      }
    }
    if (round_digit >= 5) ++mantissa;
    exponent = 0;
  } else if (exponent == 0 && dropped_first >= 5) {
    ++mantissa;
  }
  for (; exponent > 0; --exponent) {
    if (mantissa > static_cast<uint64_t>(INT64_MAX) / 10) return DecimalStatus::kOutOfRange;
    mantissa *= 10;
  }
  if (mantissa > static_cast<uint64_t>(INT64_MAX)) return DecimalStatus::kOutOfRange;
  *out = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
  if (integral) *integral = !seen_point && !has_exponent;
  return DecimalStatus::kOk;
}

bool ParseScaledDecimal(std::string_view text, int scale, int64_t* out) {
  return ParseDecimal(TrimField(text), scale, out) == DecimalStatus::kOk;
}

bool ParseTruncatedInteger(std::string_view text, int64_t* out) {
  std::string_view s = TrimSpaces(text);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  size_t start = i;
  uint64_t v = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    if (v > (static_cast<uint64_t>(INT64_MAX) - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (i == start) return false;
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && IsDigit(s[i]); ++i) {
    }
  }
  if (i != s.size()) return false;
  *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

bool ParseFiniteDouble(std::string_view text, double* out) {
  const std::string t(TrimField(text));
  if (t.empty()) return false;
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(d)) return false;
  *out = d;
  return true;
}

}  // namespace moetrace
