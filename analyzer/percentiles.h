// Exact nearest-rank percentiles (the k-th smallest, k = ceil(p * n)) of
// non-negative values, in linear time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moetrace {

// p50, p90 and p99 of v[0, n); 0 when n is 0. `scratch` holds the values of
// the selected histogram buckets (reused, no allocation once warm). `max`:
// the largest value when the caller knows it (saves a pass), else -1.
void NearestRankPercentiles(const int64_t* v, size_t n, std::vector<int64_t>* scratch,
                            int64_t* p50, int64_t* p90, int64_t* p99, int64_t max = -1);

inline void NearestRankPercentiles(const std::vector<int64_t>& v, int64_t* p50, int64_t* p90,
                                   int64_t* p99) {
  std::vector<int64_t> scratch;
  NearestRankPercentiles(v.data(), v.size(), &scratch, p50, p90, p99);
}

}  // namespace moetrace
