#include "analyzer/percentiles.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moetrace {

// Nearest-rank percentiles p50/p90/p99 of non-negative `v` (reordered):
// a 4096-bucket histogram on the high bits finds the bucket of each rank,
// then a selection inside that bucket alone gives the exact value.
void NearestRankPercentiles(std::vector<int64_t>& v, int64_t* p50, int64_t* p90, int64_t* p99) {
  *p50 = *p90 = *p99 = 0;
  if (v.empty()) return;
  int64_t mx = 0;
  for (int64_t x : v) mx = std::max(mx, x);
  int shift = 0;
  while ((mx >> shift) >= 4096) ++shift;
  std::array<uint32_t, 4097> count{};
  for (int64_t x : v) ++count[static_cast<size_t>(x >> shift)];
  auto select = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    k = k == 0 ? 0 : k - 1;
    size_t below = 0, bucket = 0;
    while (below + count[bucket] <= k) below += count[bucket++];
    // Gather the bucket's values at the front of a scratch copy.
    std::vector<int64_t> in;
    in.reserve(count[bucket]);
    for (int64_t x : v) {
      if (static_cast<size_t>(x >> shift) == bucket) in.push_back(x);
    }
    auto at = in.begin() + static_cast<std::ptrdiff_t>(k - below);
    std::nth_element(in.begin(), at, in.end());
    return *at;
  };
  *p50 = select(0.50);
  *p90 = select(0.90);
  *p99 = select(0.99);
}

}  // namespace moetrace
