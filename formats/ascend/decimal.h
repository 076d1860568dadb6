// Exact decimal text -> scaled integer, without going through double.
//
// Ascend writes timestamps as µs strings ("1704161511422904.204"): a double
// holds only ~15.9 significant digits, so converting through it loses the
// nanoseconds. These parse the text digit by digit instead.
#pragma once

#include <cstdint>
#include <string_view>

namespace moetrace {

// Parses a decimal number ("-12.5", "1704161511422904.204", "1.2e-05",
// surrounding spaces, tabs and quotes tolerated) and returns
// value * 10^scale rounded to the nearest integer (halves away from zero).
// False when the text is not a number or the result does not fit in int64.
bool ParseScaledDecimal(std::string_view text, int scale, int64_t* out);

// µs text -> ns.
inline bool ParseMicrosToNs(std::string_view text, int64_t* ns) {
  return ParseScaledDecimal(text, 3, ns);
}

// Strips spaces, tabs, CR/LF and one level of double quotes around `s`.
std::string_view TrimField(std::string_view s);

}  // namespace moetrace
