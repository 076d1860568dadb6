#include "formats/counter_sort.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace moetrace {

void SortSamplesByTime(Track& t) {
  if (std::is_sorted(t.sample_ts.begin(), t.sample_ts.end())) return;
  std::vector<size_t> order(t.sample_ts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return t.sample_ts[a] < t.sample_ts[b]; });
  std::vector<TimeNs> ts(order.size());
  std::vector<double> v(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    ts[i] = t.sample_ts[order[i]];
    v[i] = t.sample_value[order[i]];
  }
  t.sample_ts = std::move(ts);
  t.sample_value = std::move(v);
}

}  // namespace moetrace
