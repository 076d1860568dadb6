// Spearman's rank correlation, shared by the layout-search accuracy drivers
// (search_accuracy, search_exhaustive): ties take their mean rank, as
// scipy.stats.spearmanr does, so many layouts with the same simulated step
// (a swap or all-to-all variant that changes nothing) do not inflate it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace moetrace::bench {

inline std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = (double(i) + double(j)) / 2 + 1;  // ties: mean rank
    i = j + 1;
  }
  return r;
}

inline double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x = Ranks(a), y = Ranks(b);
  double mx = std::accumulate(x.begin(), x.end(), 0.0) / double(x.size());
  double my = std::accumulate(y.begin(), y.end(), 0.0) / double(y.size());
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace moetrace::bench
