// Exact decimal text -> scaled int64, without going through double.
//
// Profilers write times as µs text: Kineto ns-resolution files
// ("1712195495502094.5") and Ascend strings ("1704161511422904.204") carry
// 19 significant digits, which a double (~15.9) cannot hold. These parse the
// text digit by digit; both importers share them.
#pragma once

#include <cstdint>
#include <string_view>

namespace moetrace {

enum class DecimalStatus { kOk, kNotANumber, kOutOfRange };

// Parses "-12.5", "1704161511422904.204", "1.2e-05" (surrounding whitespace
// allowed) and stores value * 10^scale rounded to the nearest integer,
// halves away from zero. `integral`, when given, is set to whether the text
// is a plain integer literal (no '.', no exponent).
DecimalStatus ParseDecimal(std::string_view text, int scale, int64_t* out,
                           bool* integral = nullptr);

// As ParseDecimal, also tolerating one level of double quotes (CSV and
// stringly JSON fields); true on kOk.
bool ParseScaledDecimal(std::string_view text, int scale, int64_t* out);

// µs text -> ns.
inline DecimalStatus MicrosToNanos(std::string_view text, int64_t* ns, bool* integral) {
  return ParseDecimal(text, 3, ns, integral);
}
inline bool ParseMicrosToNs(std::string_view text, int64_t* ns) {
  return ParseScaledDecimal(text, 3, ns);
}

// A plain integer ("-7"); a fraction is truncated toward zero ("7.9" -> 7),
// as HTA does for stream ids. No exponent.
bool ParseTruncatedInteger(std::string_view text, int64_t* out);

// A finite double from text ("1.5", " 2e3 ", "\"7\""), surrounding
// whitespace and one level of quotes allowed; false for NaN, Infinity or no
// number. For figures read as doubles anyway (numbers written as strings).
bool ParseFiniteDouble(std::string_view text, double* out);

// Strips spaces, tabs, CR/LF and one level of double quotes around `s`.
std::string_view TrimField(std::string_view s);

}  // namespace moetrace
