#include "bench/expert_bound.h"

#include <algorithm>
#include <numeric>

namespace moetrace::bench {

std::vector<double> RelativeRankLoads(const std::vector<double>& popularity,
                                      const std::vector<int32_t>& placement, int group) {
  std::vector<double> load(size_t(std::max(group, 0)), 0.0);
  for (size_t e = 0; e < popularity.size() && e < placement.size(); ++e) {
    if (placement[e] >= 0 && placement[e] < group) load[size_t(placement[e])] += popularity[e];
  }
  const double total = std::accumulate(popularity.begin(), popularity.end(), 0.0);
  if (total > 0)
    for (double& l : load) l *= group / total;
  return load;
}

double WholeExpertBound(const std::vector<double>& popularity, int group) {
  if (popularity.empty() || group <= 0) return 1.0;
  std::vector<double> p = popularity;
  std::sort(p.begin(), p.end());
  const size_t per = p.size() / size_t(group);
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  if (per == 0 || total <= 0) return 1.0;
  const double least = p.back() + std::accumulate(p.begin(), p.begin() + (per - 1), 0.0);
  return std::max(1.0, least * group / total);
}

double MaxLoadWithCopies(const std::vector<double>& popularity, const std::vector<int32_t>& placement,
                         const tracegen::ExpertCopies& copies, int group) {
  if (group <= 0) return 1.0;
  std::vector<int> holders(popularity.size(), 1);
  for (int32_t e : copies.expert) ++holders[size_t(e)];
  std::vector<double> load(size_t(group), 0.0);
  for (size_t e = 0; e < popularity.size() && e < placement.size(); ++e)
    load[size_t(placement[e])] += popularity[e] / holders[e];
  for (size_t k = 0; k < copies.expert.size(); ++k)
    load[size_t(copies.position[k])] += popularity[size_t(copies.expert[k])] / holders[size_t(copies.expert[k])];
  const double total = std::accumulate(popularity.begin(), popularity.end(), 0.0);
  return total > 0 ? *std::max_element(load.begin(), load.end()) * group / total : 1.0;
}

}  // namespace moetrace::bench
