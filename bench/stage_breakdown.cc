#include "bench/stage_breakdown.h"

#include <algorithm>
#include <utility>

namespace moetrace::bench {

std::array<int64_t, kPartCount> PartitionStep(std::vector<Interval> events, int64_t lo, int64_t hi) {
  std::array<int64_t, kPartCount> out{};
  // Elementary segments between consecutive boundaries; each goes to the
  // highest-priority part active over it (a sweep with a count per part).
  std::vector<std::pair<int64_t, int>> edges;  // (time, +/-(part+1))
  for (const Interval& e : events) {
    const int64_t a = std::max(lo, e.start), b = std::min(hi, e.end);
    if (b <= a) continue;
    edges.emplace_back(a, e.part + 1);
    edges.emplace_back(b, -(e.part + 1));
  }
  std::sort(edges.begin(), edges.end());
  std::array<int, kPartCount> active{};
  int64_t at = lo;
  for (size_t i = 0; i <= edges.size(); ++i) {
    const int64_t t = i < edges.size() ? edges[i].first : hi;
    if (t > at) {
      int p = kPartIdle;
      for (int k = 0; k < kPartIdle; ++k)
        if (active[size_t(k)] > 0) { p = k; break; }
      out[size_t(p)] += t - at;
      at = t;
    }
    if (i < edges.size()) active[size_t(std::abs(edges[i].second) - 1)] += edges[i].second > 0 ? 1 : -1;
  }
  return out;
}

}  // namespace moetrace::bench
