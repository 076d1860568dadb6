// Durations of many ops in log buckets, for cluster-wide percentiles: 200 M
// durations cannot all be kept, and summed per-rank percentiles mean
// nothing. Values below 16 ns have a bucket each; above, each power of two
// is cut in 16 equal buckets, so a bucket's width is at most 1/16 of its
// lower bound. A percentile (nearest rank) is the middle of the bucket
// holding that rank, clamped to the exact min and max: within 1/32 (3.2%)
// of the true nearest-rank value. Sparse (only non-empty buckets), so a
// kernel with one duration costs one pair; merging is exact (counts add).
#pragma once

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace moetrace::ops {

class LogHistogram {
 public:
  // Inline: SummarizeOps buckets every device op.
  static uint32_t Bucket(int64_t v) {  // v < 0 counts as 0
    // 16 <= v < 2^53 (every real duration): v is exact as a double, whose
    // biased exponent is the octave + 1023 and whose top 4 mantissa bits
    // are the sixteenth, so bits 48-62 are 16 * (octave + 1023) + sixteenth.
    // One conversion instead of a bit scan and shifts (the operator view
    // buckets every device op); BucketSlow's value (test).
    if (static_cast<uint64_t>(v) - 16 < (uint64_t{1} << 53) - 16) {
      return static_cast<uint32_t>(std::bit_cast<uint64_t>(static_cast<double>(v)) >> 48) - 16 * (1023 + 3);
    }
    return BucketSlow(v);
  }
  static uint32_t BucketSlow(int64_t v) {
    if (v < 16) return static_cast<uint32_t>(v < 0 ? 0 : v);
    const auto u = static_cast<uint64_t>(v);
    const int octave = 63 - std::countl_zero(u);  // >= 4
    return static_cast<uint32_t>(16 * (octave - 3)) + static_cast<uint32_t>((u >> (octave - 4)) & 15);
  }
  static int64_t BucketLow(uint32_t b);     // smallest value of bucket b
  // Its largest value; INT64_MAX for the top bucket (one past it, 2^63,
  // is not an int64_t).
  static int64_t BucketLast(uint32_t b);

  // Values of one bucket in any order: `counts` holds (bucket, count) sorted
  // by bucket, as Build makes them.
  void AddBuckets(const std::vector<std::pair<uint32_t, int64_t>>& counts, int64_t min,
                  int64_t max);
  // From raw values (tests, small inputs).
  void Add(int64_t v);
  void Merge(const LogHistogram& o);

  // Nearest-rank percentile (k = ceil(p n)), p in (0, 1]; 0 when empty.
  int64_t Percentile(double p) const;
  int64_t count() const { return count_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  const std::vector<std::pair<uint32_t, int64_t>>& buckets() const { return buckets_; }

 private:
  std::vector<std::pair<uint32_t, int64_t>> buckets_;  // sorted by bucket
  int64_t count_ = 0, min_ = 0, max_ = 0;
};

}  // namespace moetrace::ops
