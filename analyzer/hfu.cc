#include "analyzer/hfu.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace moetrace {

double HardwareFlopsPerStep(const Metadata& md) {
  for (const auto& [key, value] : md.attributes) {
    if (key != kHardwareFlopsAttribute) continue;
    // strtod reads the %.17g tracegen writes back to the same double.
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0) return 0;
    return v;
  }
  return 0;
}

}  // namespace moetrace
