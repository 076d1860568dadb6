#include "formats/ascend/decimal.h"

namespace moetrace {

std::string_view TrimField(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  for (int pass = 0; pass < 2; ++pass) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    if (pass == 0 && s.size() >= 2 && s.front() == '"' && s.back() == '"') {
      s = s.substr(1, s.size() - 2);
    } else {
      break;
    }
  }
  return s;
}

bool ParseScaledDecimal(std::string_view text, int scale, int64_t* out) {
  std::string_view s = TrimField(text);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  // Significant digits as an integer plus the power of ten of its last digit.
  uint64_t mantissa = 0;
  int exponent = 0;          // value = mantissa * 10^exponent
  int dropped_first = -1;    // first digit that did not fit, for rounding
  bool dropped_rest = false;
  bool any_digit = false;
  bool seen_point = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return false;
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any_digit = true;
    int d = c - '0';
    if (mantissa <= (UINT64_MAX - 9) / 10) {  // room for one more digit
      mantissa = mantissa * 10 + d;
      if (seen_point) --exponent;
    } else {
      if (dropped_first < 0) dropped_first = d; else if (d) dropped_rest = true;
      if (!seen_point) ++exponent;
    }
  }
  if (!any_digit) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    int e = 0;
    bool edigit = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      edigit = true;
      if (e < 10000) e = e * 10 + (s[i] - '0');
    }
    if (!edigit) return false;
    exponent += eneg ? -e : e;
  }
  if (i != s.size()) return false;
  exponent += scale;
  // Round away the digits below 10^0.
  if (exponent < 0) {
    int round_digit = dropped_first >= 0 ? dropped_first : 0;
    if (exponent < -19) {
      mantissa = 0;
      round_digit = 0;
    } else {
      for (int k = 0; k < -exponent; ++k) {
        int d = static_cast<int>(mantissa % 10);
        if (k + 1 == -exponent) {
          round_digit = d;
        } else if (d) {
          dropped_rest = true;
        }
        mantissa /= 10;
      }
    }
    (void)dropped_rest;
    if (round_digit >= 5) ++mantissa;
    exponent = 0;
  } else if (dropped_first >= 5 && exponent == 0) {
    ++mantissa;
  }
  // Scale up.
  for (; exponent > 0; --exponent) {
    if (mantissa > static_cast<uint64_t>(INT64_MAX) / 10) return false;
    mantissa *= 10;
  }
  if (mantissa > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
  return true;
}

}  // namespace moetrace
