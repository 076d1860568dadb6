#include "analyzer/human_number.h"

#include <cmath>

#include <fmt/core.h>

namespace moetrace {

std::string HumanCount(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  static constexpr const char* kPrefix[] = {"", " k", " M", " G", " T", " P"};
  double a = std::abs(v);
  if (a < 999.5) {  // from 999.5 "1.00 k" ({:.3g} would print "1e+03")
    if (v == std::round(v)) return fmt::format("{:.0f}", v);
    return fmt::format("{:.3g}", v);
  }
  int p = 0;
  while (a >= 999.5 && p < 5) {  // 999,600 reads "1.00 M", not "1000 k"
    a /= 1000;
    v /= 1000;
    ++p;
  }
  const int decimals = a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f}{}", v, decimals, kPrefix[p]);
}

}  // namespace moetrace
