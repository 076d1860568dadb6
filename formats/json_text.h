// Text pieces of JSON output: escaped strings and exact microsecond values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace moetrace {

// Appends `s` as a quoted JSON string. Quotes, backslashes and control
// characters are escaped; so are '<', '>', '&' and U+2028/U+2029, so the text
// is also safe inside an HTML <script> or a JavaScript literal. Bytes that are
// not well-formed UTF-8 become \ufffd.
void AppendJsonString(std::string_view s, std::string* out);

// Appends `ns` nanoseconds as microseconds with exactly three decimals,
// computed on integers (1700000000000001234 -> "1700000000000001.234"), so
// no precision is lost to floating point.
void AppendMicros(int64_t ns, std::string* out);

void AppendInt(int64_t v, std::string* out);
void AppendUint(uint64_t v, std::string* out);
// Integral values print as integers; others in the shortest form that reads
// back exactly; NaN and infinities (not JSON) as null.
void AppendDouble(double v, std::string* out);

}  // namespace moetrace
