// Converts a JSON number of microseconds, as written in the file, to exact
// int64 nanoseconds. Parsing the decimal text directly (not through double)
// keeps nanosecond-resolution epoch timestamps exact: "1712195495502094.5"
// is 1712195495502094500 ns, which a double cannot hold.
#pragma once

#include <cstdint>
#include <string_view>

namespace moetrace {

enum class DecimalStatus { kOk, kNotANumber, kOutOfRange };

// `text` may carry surrounding whitespace. Digits beyond the nanosecond are
// rounded half away from zero. `integral` is set when the text is a plain
// integer literal (no '.', no exponent).
DecimalStatus MicrosToNanos(std::string_view text, int64_t* ns, bool* integral);

// Parses a plain decimal integer (optionally signed, optionally with a
// fraction that is truncated toward zero, as HTA does for stream ids).
bool ParseIntegerText(std::string_view text, int64_t* out);

}  // namespace moetrace
