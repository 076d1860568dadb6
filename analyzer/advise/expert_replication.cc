#include "analyzer/advise/expert_replication.h"

#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "analyzer/advise/expert_placement.h"
#include "analyzer/rank_experts.h"
#include "tracegen/routing.h"

namespace moetrace::advise {
namespace {

struct LayerLoads {
  std::vector<double> loads;
  std::vector<int32_t> placement;  // recorded (EDPB), else contiguous
  int32_t ep = 0;
  CopyLoads copies;                // copies the trace already has
};

std::vector<int32_t> Placement(const LayerLoads& l) {
  const size_t E = l.loads.size();
  std::vector<int32_t> p(E);
  for (size_t e = 0; e < E; ++e) {
    p[e] = e < l.placement.size() ? std::clamp(l.placement[e], 0, l.ep - 1)
                                  : static_cast<int32_t>(e * static_cast<size_t>(l.ep) / E);
  }
  return p;
}

// EP MaxVio of `l` with `copies` planned copies: each holder of a copied
// expert takes an equal share of its tokens (tracegen::CopyShare).
LayerCopies Plan(int32_t layer, const LayerLoads& l, int copies) {
  LayerCopies out;
  out.layer = layer;
  const std::vector<int32_t> place = Placement(l);
  const tracegen::ExpertCopies c = tracegen::ReplicateExperts(l.loads, place, l.ep, copies);
  out.expert = c.expert;
  out.ep_rank = c.position;
  std::vector<int> holders(l.loads.size(), 1);
  for (int32_t e : c.expert) ++holders[size_t(e)];
  std::vector<double> ep(size_t(l.ep), 0);
  for (size_t e = 0; e < l.loads.size(); ++e) ep[size_t(place[e])] += l.loads[e] / holders[e];
  for (size_t k = 0; k < c.expert.size(); ++k) {
    ep[size_t(c.position[k])] += l.loads[size_t(c.expert[k])] / holders[size_t(c.expert[k])];
  }
  out.ep_max_vio_after = MaxVio(ep.data(), ep.size());
  return out;
}

}  // namespace

std::optional<ReplicationPlan> PlanReplication(const std::vector<const RoutingRecord*>& records,
                                               double threshold) {
  std::map<int32_t, LayerLoads> layers;
  size_t existing = 0;
  for (const RoutingRecord* r : records) {
    if (r->ep_size < 2) continue;
    LayerLoads& l = layers[r->layer];
    if (l.loads.size() < r->tokens_per_expert.size()) l.loads.resize(r->tokens_per_expert.size(), 0);
    for (size_t e = 0; e < r->tokens_per_expert.size(); ++e) l.loads[e] += double(r->tokens_per_expert[e]);
    // Bounded by the experts (an EP rank holds at least one): the size is from the file.
    l.ep = std::max(l.ep, static_cast<int32_t>(std::min<int64_t>(r->ep_size, int64_t(l.loads.size()))));
    if (l.placement.empty()) l.placement = r->expert_to_ep_rank;
    l.copies.Add(*r);
    existing = std::max(existing, r->copy_expert.size());
  }
  std::vector<std::pair<int32_t, LayerLoads*>> moe;
  int32_t max_copies = 0;
  bool dominant = false;
  for (auto& [layer, l] : layers) {
    double total = 0, top = 0;
    for (double v : l.loads) total += v, top = std::max(top, v);
    if (total <= 0 || l.loads.size() < size_t(l.ep)) continue;
    moe.push_back({layer, &l});
    max_copies = std::max(max_copies, l.ep);
    dominant |= top > total / l.ep;  // no placement gets its rank to the mean
  }
  if (moe.empty() || !dominant || int32_t(existing) >= max_copies) return std::nullopt;
  ReplicationPlan plan;
  std::vector<LayerCopies> base;
  for (auto& [layer, l] : moe) {
    LayerCopies b;
    b.layer = layer;
    b.ep_max_vio_before = MaxVio(EpLoads(l->loads, l->placement, l->ep, l->copies).data(), size_t(l->ep));
    std::vector<int64_t> loads(l->loads.begin(), l->loads.end());
    b.ep_max_vio_migrated = PlanLayer(layer, loads, l->ep, l->placement).ep_max_vio_after;
    plan.ep_max_vio_before += b.ep_max_vio_before / double(moe.size());
    plan.ep_max_vio_migrated += b.ep_max_vio_migrated / double(moe.size());
    base.push_back(std::move(b));
  }
  if (plan.ep_max_vio_migrated < threshold) return std::nullopt;  // migration is enough
  // Mean EP MaxVio for each number of copies.
  std::vector<double> mean(size_t(max_copies) + 1, 0);
  for (int32_t n = int32_t(existing) + 1; n <= max_copies; ++n) {
    for (auto& [layer, l] : moe) mean[size_t(n)] += Plan(layer, *l, n).ep_max_vio_after / double(moe.size());
  }
  const double best = *std::min_element(mean.begin() + ptrdiff_t(existing) + 1, mean.end());
  if (best > plan.ep_max_vio_before - 0.05) return std::nullopt;
  int32_t n = int32_t(existing) + 1;
  while (mean[size_t(n)] > best + 0.02) ++n;
  plan.copies = n;
  plan.ep_max_vio_after = mean[size_t(n)];
  for (size_t i = 0; i < moe.size(); ++i) {
    LayerCopies c = Plan(moe[i].first, *moe[i].second, n);
    c.ep_max_vio_before = base[i].ep_max_vio_before;
    c.ep_max_vio_migrated = base[i].ep_max_vio_migrated;
    plan.layers.push_back(std::move(c));
  }
  return plan;
}

std::string ReplicationText(const ReplicationPlan& plan) {
  std::string out = fmt::format(
      "EPLB replication on the measured loads: {} copies per MoE layer, mean EP MaxVio {:.2f} -> {:.2f} "
      "(migration alone: {:.2f})\n",
      plan.copies, plan.ep_max_vio_before, plan.ep_max_vio_after, plan.ep_max_vio_migrated);
  for (const LayerCopies& l : plan.layers) {
    out += fmt::format("layer {}: EP MaxVio {:.2f} -> {:.2f}", l.layer, l.ep_max_vio_before, l.ep_max_vio_after);
    const size_t shown = std::min<size_t>(l.expert.size(), 6);
    for (size_t k = 0; k < shown; ++k) {
      out += fmt::format("{} e{} copy on EP rank {}", k ? "," : ":", l.expert[k], l.ep_rank[k]);
    }
    if (shown < l.expert.size()) out += ", ...";
    out += "\n";
  }
  return out;
}

}  // namespace moetrace::advise
