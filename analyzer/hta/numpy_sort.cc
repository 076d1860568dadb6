#include "analyzer/hta/numpy_sort.h"

#include <cmath>

namespace moetrace::hta {

double PairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    // numpy starts from -0.0 (the identity of addition) in its reduction,
    // which only matters for the sign of an all-zero sum; 0.0 prints the same.
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += a[i];
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (int t = 0; t < 8; ++t) r[t] = a[t];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int t = 0; t < 8; ++t) r[t] += a[i + t];
    }
    double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += a[i];
    return s;
  }
  size_t h = n / 2;
  h -= h % 8;
  return PairwiseSum(a, h) + PairwiseSum(a + h, n - h);
}

double Round2(double v) { return std::nearbyint(v * 100.0) / 100.0; }

}  // namespace moetrace::hta
