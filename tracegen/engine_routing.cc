// Expert routing as the engine sees it: expert popularity per layer and
// step (cached), the expert-to-EP-rank placement (contiguous, or balanced by
// EDPB from the last migration point's popularity), and per (step,
// micro-batch, layer) and EP group the sampled token counts and the
// all-to-all duration they imply (flat or hierarchical).
#include <algorithm>
#include <cmath>

#include "tracegen/engine_internal.h"
#include "tracegen/rng.h"

namespace moetrace::tracegen {

const std::vector<double>& EngineImpl::Popularity(int layer, int step) const {
  uint64_t key = (uint64_t(layer) << 32) | uint32_t(step);
  std::lock_guard<std::mutex> lock(popularity_mu_);  // rare: once per group routing
  auto it = popularity_.find(key);
  if (it != popularity_.end()) return it->second;
  return popularity_[key] = routing.Popularity(layer, step);
}

std::vector<int32_t> EngineImpl::Placement(int layer, int step) const {
  const int g = shape.expert_group;
  if (!cfg.routing().edpb() || step == 0) return ContiguousPlacement(shape.experts, g);
  // EDPB predicts loads from the last migration point's observed popularity.
  int interval = std::max(1, cfg.routing().edpb_interval());
  int at = (step / interval) * interval;
  if (at == 0) return ContiguousPlacement(shape.experts, g);
  const uint64_t key = (uint64_t(layer) << 32) | uint32_t(at);
  {
    std::lock_guard<std::mutex> lock(placement_mu_);
    auto it = placement_.find(key);
    if (it != placement_.end()) return it->second;
  }
  // Balanced for the loads the last step observed, moving from where the
  // previous migration point put the experts only what rebalancing needs.
  // With redundant copies the plan places them with the originals (EPLB:
  // replicate, then pack every physical expert); a copy added on top of a
  // plan made without it lands on a rank already filled (bench/README.md,
  // "redundant"). Copies() reads the copies from here.
  PlannedPlacement plan = MigrationPlanWithCopies(Popularity(layer, at - 1), Placement(layer, at - interval), g,
                                                  cfg.routing().redundant_experts());
  if (!plan.copies.expert.empty()) {
    std::lock_guard<std::mutex> lock(copies_mu_);
    copies_.emplace(key, std::move(plan.copies));
  }
  std::vector<int32_t> p = std::move(plan.placement);
  std::lock_guard<std::mutex> lock(placement_mu_);
  return placement_.emplace(key, std::move(p)).first->second;
}

ExpertCopies EngineImpl::Copies(int layer, int step) const {
  const int n = cfg.routing().redundant_experts();
  if (n <= 0) return {};
  // Chosen from the loads the placement itself is chosen from (EDPB: the
  // last migration point's popularity, planned together with the placement
  // in Placement(); else the layer's popularity at step 0, the statistics a
  // static EPLB deployment is planned with).
  int at = 0, placed = 0;
  if (cfg.routing().edpb() && step > 0) {
    const int interval = std::max(1, cfg.routing().edpb_interval());
    placed = (step / interval) * interval;
    at = std::max(0, placed - 1);
  }
  const uint64_t key = (uint64_t(layer) << 32) | uint32_t(placed);
  {
    std::lock_guard<std::mutex> lock(copies_mu_);
    auto it = copies_.find(key);
    if (it != copies_.end()) return it->second;
  }
  if (placed > 0) {  // EDPB's migration point: planned with the placement
    Placement(layer, placed);
    std::lock_guard<std::mutex> lock(copies_mu_);
    auto it = copies_.find(key);
    if (it != copies_.end()) return it->second;
  }
  ExpertCopies c = ReplicateExperts(Popularity(layer, at), Placement(layer, placed), shape.expert_group, n);
  std::lock_guard<std::mutex> lock(copies_mu_);
  return copies_.emplace(key, std::move(c)).first->second;
}

int EngineImpl::CopiesHeld(int stage, int ep_pos) const {
  if (cfg.routing().redundant_experts() <= 0 || ep_pos < 0 || ep_pos >= shape.expert_group) return 0;
  {
    std::lock_guard<std::mutex> lock(copies_mu_);
    auto it = held_.find(stage);
    if (it != held_.end()) return it->second[size_t(ep_pos)];
  }
  std::vector<int> held(size_t(shape.expert_group), 0);
  auto add_slice = [&](int ms) {
    for (int l = shape.stage_first_layer[ms]; l < SliceEnd(ms); ++l) {
      if (!shape.IsMoe(l)) continue;
      for (int32_t p : Copies(l, 0).position) ++held[size_t(p)];
    }
  };
  if (shape.schedule == "dualpipe") {
    add_slice(stage);
    if (shape.pp - 1 - stage != stage) add_slice(shape.pp - 1 - stage);
  } else {
    for (int c = 0; c < shape.vpp; ++c) add_slice(c * shape.pp + stage);
  }
  std::lock_guard<std::mutex> lock(copies_mu_);
  return held_.emplace(stage, std::move(held)).first->second[size_t(ep_pos)];
}

void EngineImpl::ComputeA2ADuration(GroupRouting& g, const std::vector<int32_t>& members,
                                    const std::vector<double>& pop, int64_t tokens) const {
  // Physical experts (copies included; the probe's routing has none).
  const int n = g.members, E = static_cast<int>(g.placement.size()), k = shape.top_k;
  const double tok_bytes = 2.0 * shape.hidden;
  if (n <= 1) {
    g.a2a_dur = 0;
    return;
  }
  bool spans = shape.SpansNodes(members);
  // send[i][j] token copies from member i to member j
  std::vector<double> send_intra(n, 0), send_inter(n, 0), recv_intra(n, 0), recv_inter(n, 0),
      recv_total(n, 0);
  for (int i = 0; i < n; ++i) {
    const int32_t* c = &g.counts[size_t(i) * E];
    for (int e = 0; e < E; ++e) {
      int j = g.placement[e];
      if (j == i) {
        recv_total[j] += c[e];
        continue;
      }
      bool inter = shape.Node(members[i]) != shape.Node(members[j]);
      (inter ? send_inter[i] : send_intra[i]) += c[e];
      (inter ? recv_inter[j] : recv_intra[j]) += c[e];
      recv_total[j] += c[e];
    }
  }
  double alpha_intra = hw.alpha_intra_ns(), alpha_inter = hw.alpha_inter_ns();
  if (!spans || cfg.comm().a2a() == "flat") {
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      double t = std::max(TransferNs(std::max(send_intra[i], recv_intra[i]) * tok_bytes, false),
                          TransferNs(std::max(send_inter[i], recv_inter[i]) * tok_bytes, true));
      worst = std::max(worst, t);
    }
    g.a2a_dur = static_cast<TimeNs>((n - 1) * (spans ? alpha_inter : alpha_intra) + worst);
    return;
  }
  // Hierarchical (two-level): (1) inter-node, each token sent once per
  // destination node that holds any of its experts (expected distinct nodes
  // of k draws); (2) intra-node redistribution of every copy over HCCS.
  std::vector<int> node_of(n);
  std::vector<int> nodes;
  for (int i = 0; i < n; ++i) {
    node_of[i] = shape.Node(members[i]);
    if (std::find(nodes.begin(), nodes.end(), node_of[i]) == nodes.end()) nodes.push_back(node_of[i]);
  }
  const int q = static_cast<int>(nodes.size());
  std::vector<double> p_node(q, 0);
  for (int e = 0; e < E; ++e) {
    int nd = node_of[g.placement[e]];
    p_node[std::find(nodes.begin(), nodes.end(), nd) - nodes.begin()] += pop[e];
  }
  const double ranks_per_node = double(n) / q;
  double inter_worst = 0;
  const int dpn = shape.devices_per_node;
  g.inter_by_pos.assign(size_t(dpn), 0);
  g.intra_by_node.assign(size_t(q), 0);
  for (int i = 0; i < n; ++i) {
    double bytes = 0;
    for (int a = 0; a < q; ++a) {
      if (nodes[a] == node_of[i]) continue;
      bytes += tokens * (1 - std::pow(1 - p_node[a], k)) * tok_bytes;
    }
    const double t = double(TransferNs(bytes, true));
    inter_worst = std::max(inter_worst, t);
    TimeNs& pos = g.inter_by_pos[size_t(members[i] % dpn)];
    pos = std::max(pos, static_cast<TimeNs>((q - 1) * alpha_inter + t));
  }
  double intra_worst = 0;
  for (int j = 0; j < n; ++j) {
    const double t = double(TransferNs(recv_total[j] * tok_bytes * (ranks_per_node - 1) / ranks_per_node, false));
    intra_worst = std::max(intra_worst, t);
    TimeNs& nd = g.intra_by_node[size_t(std::find(nodes.begin(), nodes.end(), node_of[j]) - nodes.begin())];
    nd = std::max(nd, static_cast<TimeNs>((ranks_per_node - 1) * alpha_intra + t));
  }
  g.a2a_inter_dur = static_cast<TimeNs>((q - 1) * alpha_inter + inter_worst);
  g.a2a_intra_dur = static_cast<TimeNs>((ranks_per_node - 1) * alpha_intra + intra_worst);
  g.a2a_dur = static_cast<TimeNs>((q - 1) * alpha_inter + inter_worst +
                                  (ranks_per_node - 1) * alpha_intra + intra_worst);
}

GroupRouting& EngineImpl::Routing(RankSim& r, int mb, int layer) const {
  uint64_t gid = shape.EpGroupId(r.rank);
  uint64_t key = Key(gid, r.step, mb, layer);
  std::unique_lock<std::mutex> lock;
  if (r.routing_mu != nullptr) lock = std::unique_lock<std::mutex>(*r.routing_mu);
  RoutingCache& cache = *r.routing;  // node-based: the entry stays put after unlocking
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  GroupRouting& g = cache[key];
  std::vector<int32_t> members = shape.EpGroup(r.rank);
  g.members = static_cast<int>(members.size());
  g.uses_left = 2 * g.members;
  const auto& pop = Popularity(layer, r.step);
  g.counts.assign(size_t(g.members) * shape.experts, 0);
  int64_t tokens = shape.TokensMoe();
  for (int i = 0; i < g.members; ++i)
    routing.SampleCounts(pop, tokens, r.step, mb, layer, members[i], &g.counts[size_t(i) * shape.experts]);
  g.placement = Placement(layer, r.step);
  const ExpertCopies copies = Copies(layer, r.step);
  if (copies.expert.empty()) {
    ComputeA2ADuration(g, members, pop, tokens);
    return g;
  }
  // Redundant copies: each member's tokens of a copied expert split evenly
  // over its holders (the original, then its copies).
  const int E = shape.experts, P = E + static_cast<int>(copies.expert.size());
  g.copy_of = copies.expert;
  g.placement.insert(g.placement.end(), copies.position.begin(), copies.position.end());
  std::vector<int> holders(E, 1);
  for (int32_t e : copies.expert) ++holders[e];
  std::vector<int32_t> phys(size_t(g.members) * P, 0);
  for (int i = 0; i < g.members; ++i) {
    const int32_t* c = &g.counts[size_t(i) * E];
    int32_t* out = &phys[size_t(i) * P];
    std::vector<int> nth(E, 0);  // holder index of the next copy of each expert
    for (int e = 0; e < E; ++e) out[e] = int32_t(CopyShare(c[e], holders[e], 0, i));
    for (int k = 0; k < P - E; ++k) {
      const int e = copies.expert[k];
      out[E + k] = int32_t(CopyShare(c[e], holders[e], ++nth[e], i));
    }
  }
  g.counts = std::move(phys);
  std::vector<double> phys_pop(P);
  for (int e = 0; e < P; ++e) {
    const int x = e < E ? e : copies.expert[e - E];
    phys_pop[e] = pop[x] / holders[x];
  }
  ComputeA2ADuration(g, members, phys_pop, tokens);
  return g;
}

}  // namespace moetrace::tracegen
