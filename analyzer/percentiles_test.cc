#include "analyzer/percentiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace moetrace {
namespace {

TEST(Percentiles, MatchSortingOnSkewedData) {
  std::mt19937_64 rng(5);
  for (size_t n : {size_t{1}, size_t{2}, size_t{10}, size_t{1000}, size_t{100000}}) {
    std::vector<int64_t> v(n);
    for (auto& x : v) x = (rng() % 10 == 0) ? static_cast<int64_t>(rng() % 50'000'000) : static_cast<int64_t>(rng() % 3000);
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    auto nr = [&](double p) {
      size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
      return sorted[k == 0 ? 0 : k - 1];
    };
    int64_t p50, p90, p99;
    NearestRankPercentiles(v, &p50, &p90, &p99);
    EXPECT_EQ(p50, nr(0.5)) << n;
    EXPECT_EQ(p90, nr(0.9)) << n;
    EXPECT_EQ(p99, nr(0.99)) << n;
  }
  std::vector<int64_t> four = {40, 10, 30, 20};  // p50 = 2nd smallest
  int64_t p50, p90, p99;
  NearestRankPercentiles(four, &p50, &p90, &p99);
  EXPECT_EQ(p50, 20);
  EXPECT_EQ(p90, 40);
  EXPECT_EQ(p99, 40);
}

// Hand-worked: ranks that share a bucket are gathered once; a permutation
// of 0..99 gives p50 = 49 (the 50th smallest), p90 = 89, p99 = 98.
TEST(Percentiles, HandWorkedSharedBucketsAndPermutation) {
  std::vector<int64_t> v(96, 5);
  for (int i = 0; i < 4; ++i) v.insert(v.begin() + 7 * i, 1'000'000);
  int64_t p50, p90, p99;
  NearestRankPercentiles(v, &p50, &p90, &p99);
  EXPECT_EQ(p50, 5);
  EXPECT_EQ(p90, 5);
  EXPECT_EQ(p99, 1'000'000);  // the 99th smallest of 96 x 5 and 4 x 1e6

  std::vector<int64_t> perm(100);
  for (int i = 0; i < 100; ++i) perm[i] = (i * 37) % 100;
  NearestRankPercentiles(perm, &p50, &p90, &p99);
  EXPECT_EQ(p50, 49);
  EXPECT_EQ(p90, 89);
  EXPECT_EQ(p99, 98);
  // With a caller-given max and reused scratch (the per-rank call's form).
  std::vector<int64_t> scratch;
  NearestRankPercentiles(perm.data(), perm.size(), &scratch, &p50, &p90, &p99, 99);
  EXPECT_EQ(p50, 49);
  EXPECT_EQ(p90, 89);
  EXPECT_EQ(p99, 98);
}

}  // namespace
}  // namespace moetrace
