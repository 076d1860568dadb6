// Exact nearest-rank percentiles (the k-th smallest, k = ceil(p * n)) of
// non-negative values, in linear time.
#pragma once

#include <cstdint>
#include <vector>

namespace moetrace {

// p50, p90 and p99 of `v` (which may be reordered); 0 for an empty `v`.
void NearestRankPercentiles(std::vector<int64_t>& v, int64_t* p50, int64_t* p90, int64_t* p99);

}  // namespace moetrace
