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

// Durations are parsed in picoseconds and rounded to ns along a stream with
// the sub-ns remainder carried to the next task: the profiler prints
// durations such as 1.2695 µs (half a ns), and rounding each one alone
// would bias the busy time of a stream by up to 0.5 ns per task (16 ns over
// the 276 tasks of a small trace). With the carry every end stays within
// 1 ns of the exact value and the sum of durations within 0.5 ns.
class NsCarry {
 public:
  int64_t Round(int64_t ps) {
    int64_t v = ps + carry_;
    int64_t ns = v >= 0 ? (v + 500) / 1000 : -((-v + 500) / 1000);
    carry_ = v - ns * 1000;
    return ns;
  }

 private:
  int64_t carry_ = 0;
};

// Strips spaces, tabs, CR/LF and one level of double quotes around `s`.
std::string_view TrimField(std::string_view s);

}  // namespace moetrace
