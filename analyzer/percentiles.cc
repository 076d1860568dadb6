#include "analyzer/percentiles.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moetrace {

// A 4096-bucket histogram on the high bits finds the bucket of each rank;
// one more pass gathers the values of those (at most 3) buckets, and a
// selection inside each gives the exact value. Three linear passes in all.
void NearestRankPercentiles(const int64_t* v, size_t n, std::vector<int64_t>* scratch,
                            int64_t* p50, int64_t* p90, int64_t* p99, int64_t max) {
  *p50 = *p90 = *p99 = 0;
  if (n == 0) return;
  int64_t mx = max;
  if (mx < 0) {
    mx = 0;
    for (size_t i = 0; i < n; ++i) mx = std::max(mx, v[i]);
  }
  int shift = 0;
  while ((mx >> shift) >= 4096) ++shift;
  // Four interleaved histograms, summed after: values often repeat (a
  // launch delay is the same few ns on an idle device), and one histogram
  // would make each increment wait for the previous one's store.
  std::array<std::array<uint32_t, 4097>, 4> part{};
  auto bucket_of = [&](int64_t x) { return static_cast<size_t>(std::max<int64_t>(x, 0) >> shift); };
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++part[0][bucket_of(v[i])];
    ++part[1][bucket_of(v[i + 1])];
    ++part[2][bucket_of(v[i + 2])];
    ++part[3][bucket_of(v[i + 3])];
  }
  for (; i < n; ++i) ++part[0][bucket_of(v[i])];
  std::array<uint32_t, 4097> count;
  for (size_t b = 0; b < count.size(); ++b) count[b] = part[0][b] + part[1][b] + part[2][b] + part[3][b];

  // The rank k (0-based) of each percentile, its bucket, and the number of
  // values below that bucket. Ranks ascend, so buckets do too.
  const double ps[3] = {0.50, 0.90, 0.99};
  size_t k[3], bucket[3], below[3];
  size_t b = 0, acc = 0;
  for (int j = 0; j < 3; ++j) {
    const size_t r = static_cast<size_t>(std::ceil(ps[j] * static_cast<double>(n)));
    k[j] = r == 0 ? 0 : r - 1;
    while (acc + count[b] <= k[j]) acc += count[b++];
    bucket[j] = b;
    below[j] = acc;
  }
  // Gather the distinct buckets' values, each bucket contiguous: bucket
  // j starts at the sum of the counts of the distinct buckets before it.
  size_t start[3], fill[3], total = 0;
  for (int j = 0; j < 3; ++j) {
    if (j > 0 && bucket[j] == bucket[j - 1]) {
      start[j] = start[j - 1];
      continue;
    }
    start[j] = total;
    total += count[bucket[j]];
  }
  scratch->resize(total);
  int64_t* out = scratch->data();
  for (int j = 0; j < 3; ++j) fill[j] = start[j];
  const size_t b0 = bucket[0], b1 = bucket[1], b2 = bucket[2];
  for (size_t i = 0; i < n; ++i) {
    const size_t x = static_cast<size_t>(std::max<int64_t>(v[i], 0) >> shift);
    if (x < b0 || x > b2) continue;
    if (x == b0) out[fill[0]++] = v[i];
    else if (x == b1) out[fill[1]++] = v[i];
    else if (x == b2) out[fill[2]++] = v[i];
  }
  int64_t* res[3] = {p50, p90, p99};
  for (int j = 0; j < 3; ++j) {
    int64_t* lo = out + start[j];
    int64_t* hi = lo + count[bucket[j]];
    int64_t* at = lo + (k[j] - below[j]);
    std::nth_element(lo, at, hi);
    *res[j] = *at;
  }
}

}  // namespace moetrace
