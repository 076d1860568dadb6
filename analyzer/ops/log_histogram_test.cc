#include "analyzer/ops/log_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace moetrace::ops {
namespace {

TEST(LogHistogram, BucketsCoverEveryValueOnce) {
  EXPECT_EQ(LogHistogram::Bucket(-5), 0u);
  EXPECT_EQ(LogHistogram::Bucket(15), 15u);
  EXPECT_EQ(LogHistogram::Bucket(16), 16u);
  EXPECT_EQ(LogHistogram::Bucket(31), 31u);
  EXPECT_EQ(LogHistogram::Bucket(32), 32u);  // [32, 34)
  EXPECT_EQ(LogHistogram::Bucket(33), 32u);
  EXPECT_EQ(LogHistogram::BucketLow(32), 32);
  EXPECT_EQ(LogHistogram::BucketLast(32), 33);
  EXPECT_EQ(LogHistogram::Bucket(100), 57u);  // [100, 104)
  EXPECT_EQ(LogHistogram::BucketLow(57), 100);
  EXPECT_EQ(LogHistogram::BucketLast(57), 103);
  EXPECT_EQ(LogHistogram::Bucket(INT64_MAX), 959u);
  EXPECT_EQ(LogHistogram::BucketLow(959), int64_t{31} << 58);
  // One past it, 2^63, is no int64_t (review: rank_ops' gather bound and the
  // cluster percentile overflowed there). A row's p50 in this bucket needs two
  // durations of ~2^63 ns, whose sum overflows the row's total anyway, so this
  // is tested here rather than through a rank.
  EXPECT_EQ(LogHistogram::BucketLast(959), INT64_MAX);
  for (int64_t v = 0; v < 5000; ++v) {
    const uint32_t b = LogHistogram::Bucket(v);
    ASSERT_LE(LogHistogram::BucketLow(b), v);
    ASSERT_GE(LogHistogram::BucketLast(b), v);
  }
}

// The double-conversion path equals the bit-scan formula at every octave's
// edges, around 2^53 where the conversion path ends, and on random values.
TEST(LogHistogram, BucketByDoubleEqualsTheBitScan) {
  std::vector<int64_t> vs = {-1, 0, 1, 15, 16, 17, 31, 32, 33, 100, INT64_MAX, INT64_MIN};
  for (int k = 4; k < 63; ++k) {
    const int64_t p = int64_t{1} << k;
    for (int64_t d = -3; d <= 3; ++d) vs.push_back(p + d);
    vs.push_back(p + p / 2 - 1);
    vs.push_back(p + (p - 1));  // 2p - 1 without overflowing at k = 62
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) vs.push_back(static_cast<int64_t>(rng() >> (rng() % 63)));
  for (int64_t v : vs) ASSERT_EQ(LogHistogram::Bucket(v), LogHistogram::BucketSlow(v)) << v;
  EXPECT_EQ(LogHistogram::Bucket((int64_t{1} << 53) - 1), 16u * 49 + 15);  // the last value converted
  EXPECT_EQ(LogHistogram::Bucket(int64_t{1} << 53), 16u * 50);  // the first one scanned
}

// Merged histograms give the nearest-rank percentile of all the values
// within 1/32 of the exact one, and exactly below 16 ns.
TEST(LogHistogram, MergedPercentilesWithinBoundOfExact) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> all;
  LogHistogram merged;
  for (int part = 0; part < 8; ++part) {
    LogHistogram h;
    for (int i = 0; i < 1000; ++i) {
      const auto v = static_cast<int64_t>(std::exp(std::uniform_real_distribution<double>(3, 16)(rng)));
      h.Add(v);
      all.push_back(v);
    }
    merged.Merge(h);
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(merged.count(), 8000);
  EXPECT_EQ(merged.min(), all.front());
  EXPECT_EQ(merged.max(), all.back());
  for (double p : {0.01, 0.5, 0.9, 0.99, 1.0}) {
    const int64_t exact = all[static_cast<size_t>(std::ceil(p * 8000)) - 1];
    const int64_t got = merged.Percentile(p);
    EXPECT_LE(std::abs(got - exact), exact / 32 + 1) << p;
    EXPECT_EQ(LogHistogram::Bucket(got), LogHistogram::Bucket(exact)) << p;
  }
  LogHistogram small;
  for (int64_t v : {3, 9, 9, 12}) small.Add(v);
  EXPECT_EQ(small.Percentile(0.5), 9);
  EXPECT_EQ(small.Percentile(0.99), 12);
  EXPECT_EQ(LogHistogram().Percentile(0.5), 0);
}

}  // namespace
}  // namespace moetrace::ops
