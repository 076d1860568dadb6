#include "analyzer/advise/expert_placement.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace moetrace::advise {
namespace {

double EpMaxVio(const std::vector<int64_t>& loads, const std::vector<int32_t>& placement,
                int32_t ep) {
  std::vector<int64_t> per(size_t(ep), 0);
  for (size_t e = 0; e < loads.size(); ++e) per[size_t(placement[e])] += loads[e];
  const double total = double(std::accumulate(per.begin(), per.end(), int64_t(0)));
  if (total <= 0) return 0;
  return double(*std::max_element(per.begin(), per.end())) / (total / ep) - 1;
}

}  // namespace

LayerPlan PlanLayer(int32_t layer, const std::vector<int64_t>& loads, int32_t ep_size,
                    const std::vector<int32_t>& current) {
  LayerPlan plan;
  plan.layer = layer;
  const int32_t E = int32_t(loads.size());
  const int32_t ep = std::max(1, std::min(ep_size, E));
  plan.ep_size = ep;
  std::vector<int32_t> cur(static_cast<size_t>(E));
  const int32_t per_rank = (E + ep - 1) / ep;
  for (int32_t e = 0; e < E; ++e) {
    const bool given = size_t(E) == current.size() && current[size_t(e)] >= 0 && current[size_t(e)] < ep;
    cur[size_t(e)] = given ? current[size_t(e)] : std::min(ep - 1, e / per_rank);
  }
  std::vector<int32_t> slots(size_t(ep), 0);
  for (int32_t r : cur) ++slots[size_t(r)];
  std::vector<int32_t> order(static_cast<size_t>(E));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return loads[size_t(a)] > loads[size_t(b)]; });
  std::vector<int64_t> load(size_t(ep), 0);
  plan.placement.assign(size_t(E), 0);
  for (int32_t e : order) {
    // Least-loaded rank with a free slot; ties keep the expert where it is.
    int32_t best = -1;
    for (int32_t r = 0; r < ep; ++r) {
      if (slots[size_t(r)] == 0) continue;
      if (best < 0 || load[size_t(r)] < load[size_t(best)] ||
          (load[size_t(r)] == load[size_t(best)] && r == cur[size_t(e)])) {
        best = r;
      }
    }
    --slots[size_t(best)];
    load[size_t(best)] += loads[size_t(e)];
    plan.placement[size_t(e)] = best;
    if (best != cur[size_t(e)]) plan.moves.push_back({e, cur[size_t(e)], best, loads[size_t(e)]});
  }
  std::sort(plan.moves.begin(), plan.moves.end(),
            [](const ExpertMove& a, const ExpertMove& b) { return a.tokens > b.tokens; });
  plan.ep_max_vio_before = EpMaxVio(loads, cur, ep);
  plan.ep_max_vio_after = EpMaxVio(loads, plan.placement, ep);
  return plan;
}

std::vector<LayerPlan> PlanExpertPlacement(const std::vector<const RoutingRecord*>& records) {
  struct Agg { std::vector<int64_t> loads; int32_t ep = 0; std::vector<int32_t> placement; };
  std::map<int32_t, Agg> layers;
  for (const RoutingRecord* r : records) {
    Agg& a = layers[r->layer];
    if (a.loads.size() < r->tokens_per_expert.size()) a.loads.resize(r->tokens_per_expert.size(), 0);
    for (size_t e = 0; e < r->tokens_per_expert.size(); ++e) a.loads[e] += r->tokens_per_expert[e];
    a.ep = std::max(a.ep, r->ep_size);
    if (a.placement.empty()) a.placement = r->expert_to_ep_rank;
  }
  std::vector<LayerPlan> plans;
  for (auto& [layer, a] : layers) {
    if (a.loads.empty() || a.ep < 2) continue;
    plans.push_back(PlanLayer(layer, a.loads, a.ep, a.placement));
  }
  return plans;
}

}  // namespace moetrace::advise
