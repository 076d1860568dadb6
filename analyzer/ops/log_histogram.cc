#include "analyzer/ops/log_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace moetrace::ops {

int64_t LogHistogram::BucketLow(uint32_t b) {
  if (b < 16) return b;
  const int octave = static_cast<int>(b / 16) + 3;
  return static_cast<int64_t>((16ull + b % 16) << (octave - 4));
}

int64_t LogHistogram::BucketLast(uint32_t b) {
  if (b < 16) return b;
  const int octave = static_cast<int>(b / 16) + 3;
  const uint64_t end = (17ull + b % 16) << (octave - 4);  // one past: 2^63 for the top bucket
  return static_cast<int64_t>(std::min<uint64_t>(end - 1, INT64_MAX));
}

void LogHistogram::AddBuckets(const std::vector<std::pair<uint32_t, int64_t>>& counts,
                              int64_t min, int64_t max) {
  LogHistogram h;
  h.buckets_ = counts;
  for (const auto& [b, c] : counts) h.count_ += c;
  h.min_ = min;
  h.max_ = max;
  Merge(h);
}

void LogHistogram::Add(int64_t v) {
  v = std::max<int64_t>(v, 0);
  AddBuckets({{Bucket(v), 1}}, v, v);
}

void LogHistogram::Merge(const LogHistogram& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  std::vector<std::pair<uint32_t, int64_t>> out;
  out.reserve(buckets_.size() + o.buckets_.size());
  size_t i = 0, j = 0;
  while (i < buckets_.size() || j < o.buckets_.size()) {
    if (j == o.buckets_.size() || (i < buckets_.size() && buckets_[i].first < o.buckets_[j].first)) {
      out.push_back(buckets_[i++]);
    } else if (i == buckets_.size() || o.buckets_[j].first < buckets_[i].first) {
      out.push_back(o.buckets_[j++]);
    } else {
      out.emplace_back(buckets_[i].first, buckets_[i].second + o.buckets_[j].second);
      ++i;
      ++j;
    }
  }
  buckets_ = std::move(out);
  count_ += o.count_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

int64_t LogHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  const auto k = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(p * static_cast<double>(count_))));
  int64_t seen = 0;
  for (const auto& [b, c] : buckets_) {
    seen += c;
    if (seen >= k) {
      // Exact below 16 ns; else the bucket's middle.
      const int64_t mid = BucketLow(b) + (BucketLast(b) - BucketLow(b)) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace moetrace::ops
