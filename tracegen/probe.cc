// ProbeCosts (probe.h): builds blocks with the engine's own builders
// (LayerForward/LayerBackward, FuseChains, AddHead/AddEmbedding,
// BuildOptimizer) on a RankSim in solo mode and runs them with Advance.
#include "tracegen/probe.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "tracegen/engine_internal.h"
#include "tracegen/rng.h"

namespace moetrace::tracegen {

struct Prober {
  const EngineImpl& e;
  RankSim r;
  RoutingCache routing;

  explicit Prober(const EngineImpl& engine, int rank) : e(engine) {
    r.rank = rank;
    r.stage = e.shape.Stage(rank);
    r.routing = &routing;
    r.keep_routing = true;  // the same expected routing for every probe
    r.solo = true;
  }

  // Expected counts of `layer` for micro-batches 0..2, the most loaded EP
  // position swapped with this rank's, so the probe sees the straggler.
  // With routing.redundant_experts, the copies the engine makes from this
  // popularity (EngineImpl::Copies: ReplicateExperts over the contiguous
  // placement), each member's tokens of a copied expert split over its
  // holders as EngineImpl::Routing splits them. `migrated`: the routing
  // after an EDPB migration point, copies planned with the originals
  // (EDPB's stage split, ProbeMoeLayers); the search's estimate
  // (ProbeCosts) stands for a step that has not migrated yet, as the
  // engine's first step has not.
  void SeedRouting(std::initializer_list<int> layers, const std::vector<double>& pop, bool migrated) {
    const ModelShape& s = e.shape;
    std::vector<int32_t> members = s.EpGroup(r.rank);
    GroupRouting g;
    g.members = int(members.size());
    const int E = s.experts;
    const double slots = double(s.TokensMoe()) * s.top_k;
    std::vector<int32_t> expected(E);
    for (int ex = 0; ex < E; ++ex) expected[ex] = int32_t(std::llround(slots * pop[ex]));
    g.placement = ContiguousPlacement(E, g.members);
    ExpertCopies copies;
    if (migrated && e.cfg.routing().edpb() && e.cfg.routing().redundant_experts() > 0) {
      // EDPB places the copies with the originals (EngineImpl::Placement).
      PlannedPlacement plan = MigrationPlanWithCopies(pop, g.placement, g.members, e.cfg.routing().redundant_experts());
      g.placement = std::move(plan.placement);
      copies = std::move(plan.copies);
    } else {
      copies = ReplicateExperts(pop, g.placement, g.members, e.cfg.routing().redundant_experts());
    }
    const int P = E + int(copies.expert.size());
    std::vector<int> holders(E, 1);
    for (int32_t ex : copies.expert) ++holders[ex];
    g.copy_of = copies.expert;
    g.placement.insert(g.placement.end(), copies.position.begin(), copies.position.end());
    g.counts.resize(size_t(g.members) * P);
    std::vector<double> phys_pop(P);
    for (int i = 0; i < g.members; ++i) {  // every member alike: the expected counts
      int32_t* out = &g.counts[size_t(i) * P];
      std::vector<int> nth(E, 0);
      for (int ex = 0; ex < E; ++ex) out[ex] = int32_t(CopyShare(expected[ex], holders[ex], 0, i));
      for (int k = E; k < P; ++k) {
        const int ex = g.copy_of[k - E];
        out[k] = int32_t(CopyShare(expected[ex], holders[ex], ++nth[ex], i));
      }
    }
    for (int k = 0; k < P; ++k) {
      const int ex = k < E ? k : g.copy_of[k - E];
      phys_pop[k] = pop[ex] / holders[ex];
    }
    std::vector<double> load(g.members, 0);
    for (int k = 0; k < P; ++k) load[g.placement[k]] += phys_pop[k];
    const int hot = int(std::max_element(load.begin(), load.end()) - load.begin());
    const int mine = s.EpPosition(r.rank);
    for (int32_t& p : g.placement) p = p == hot ? mine : p == mine ? hot : p;
    e.ComputeA2ADuration(g, members, phys_pop, s.TokensMoe());
    g.uses_left = 1 << 30;
    for (int layer : layers)
      for (int mb = 0; mb < 3; ++mb) routing[Key(s.EpGroupId(r.rank), 0, mb, layer)] = g;
  }

  // Set by Run: when the block's swap-out starts, and when its first
  // backward op named `swap_reader` starts (the op that waits for the
  // swap-in), from the block's start; -1 if there is none.
  uint16_t swap_reader = kOpNameCount;
  TimeNs swap_out_at = -1, swap_reader_at = -1;

  TaskCost Run() {
    Block& b = r.block;
    // What the stats need, copied: Advance clears the block when it ends.
    struct Brief {
      TimeNs dur;
      uint8_t stream;
      bool compute, ep;
      int32_t mb;
      bool swap_out, reader;
    };
    std::vector<Brief> brief;
    brief.reserve(b.ops.size());
    for (const Op& o : b.ops)
      brief.push_back({o.dur, o.stream, o.cat == Category::kCompute,
                       o.cat == Category::kCollective && o.cclass == CommClass::kEP, o.mb,
                       (o.flags & kFlagSwapOut) != 0, o.name == swap_reader && o.phase != Phase::kForward});
    e.Finalize(r, b);
    for (TimeNs& t : r.ready) t = kBaseTime;
    r.last_dev_end = kBaseTime;
    // The host has issued everything ahead (as it runs ahead of the device
    // in a step), so the run measures the device; the search adds the host
    // issue time per op itself. A host sync still ties the host to the device.
    r.t_py = r.t_deq = kBaseTime - TimeNs(brief.size() + 1) * (e.py_cost_ + e.dq_cost_ + std::max(e.gap_fwd_, e.gap_bwd_));
    r.phase = 5;  // NextBlock ends the run after this block
    e.Advance(r, false);
    TaskCost c;
    c.ops = int64_t(brief.size());
    // Sweep: EP time not covered by compute.
    std::vector<std::pair<TimeNs, int>> edges;  // +-1 compute (x1), ep (x1000)
    TimeNs end = kBaseTime, mb_end[2] = {kBaseTime, kBaseTime};
    swap_out_at = swap_reader_at = -1;
    for (size_t i = 0; i < brief.size(); ++i) {
      const Brief& o = brief[i];
      if (o.swap_out && swap_out_at < 0) swap_out_at = r.end[i] - o.dur - kBaseTime;
      if (o.reader && swap_reader_at < 0) swap_reader_at = r.end[i] - o.dur - kBaseTime;
      if (o.stream != kSSend && o.stream != kSCopy) end = std::max(end, r.end[i]);
      // The fused probe's chains: the forward of micro-batch 1, the backward of 0.
      if (o.stream != kSSend && o.stream != kSCopy && (o.mb == 0 || o.mb == 1))
        mb_end[o.mb] = std::max(mb_end[o.mb], r.end[i]);
      if (o.ep) c.ep_ns += o.dur;
      if (!o.compute && !o.ep) continue;
      const int w = o.compute ? 1 : 1000;
      edges.emplace_back(r.end[i] - o.dur, w);
      edges.emplace_back(r.end[i], -w);
    }
    c.ns = end - kBaseTime;
    c.bwd_after_fwd_ns = mb_end[0] - mb_end[1];
    std::sort(edges.begin(), edges.end());
    int compute = 0, ep = 0;
    TimeNs last = 0;
    for (auto [t, w] : edges) {
      if (ep > 0 && compute == 0) c.ep_exposed_ns += t - last;
      last = t;
      if (w == 1 || w == -1) compute += w;
      else ep += w / 1000;
    }
    return c;
  }

  // Forward, backward and fused F&B of one layer (micro-batches 0 and 1);
  // with `next` (another layer of the same kind, or -1) the fused pair of
  // both layers too: what a further layer adds to a fused item once the
  // segments alternate across layer boundaries.
  LayerCost ProbeLayer(int layer, int next) {
    LayerCost lc;
    Block& b = r.block;
    int32_t chain = -1;
    b.Clear();
    e.LayerForward(r, b, chain, layer, 0, Phase::kForward);
    lc.fwd = Run();
    const RankSim::Act act = r.acts[RankSim::ActKey(0, layer)];
    lc.act_kept = double(act.kept);
    lc.act_swapped = double(act.swapped);
    lc.act_extra = double(act.extra);
    lc.swap_ns = act.swapped > 0 ? e.TransferNsHost(double(act.swapped)) : 0;
    lc.swap_out_at_ns = act.swapped > 0 ? std::max<TimeNs>(0, swap_out_at) : 0;
    if (next >= 0) {  // its activations, for the two-layer backward below
      b.Clear();
      chain = -1;
      e.LayerForward(r, b, chain, next, 0, Phase::kForward);
      b.Clear();
    }
    const auto saved = r.acts;
    // The swapped tensors count as prefetched (PrefetchSwapIns brings them
    // back during the previous item; the search times the copies).
    b.Clear();
    chain = -1;
    // Full recompute: the re-run forward's first op reads the swapped input.
    const bool full = e.cfg.memory().recompute() == "full";
    swap_reader = full ? uint16_t(kOpNameCount) : EngineImpl::SwapGemm(act);
    e.LayerBackward(r, b, chain, layer, 0);
    e.FlushWgrads(r, b);  // adaptive: the weight gradients stay in this block
    lc.bwd = Run();
    swap_reader = kOpNameCount;
    lc.swap_in_slack_ns = act.swapped > 0 ? std::max<TimeNs>(0, swap_reader_at) : 0;
    r.acts = saved;
    auto fused = [&](int layers) {
      b.Clear();
      int32_t c = -1;
      e.LayerForward(r, b, c, layer, 1, Phase::kForward);
      if (layers == 2) e.LayerForward(r, b, c, next, 1, Phase::kForward);
      const size_t na = b.ops.size();
      c = -1;
      if (layers == 2) e.LayerBackward(r, b, c, next, 0);
      e.LayerBackward(r, b, c, layer, 0);
      e.FlushWgrads(r, b);
      e.FuseChains(b, na, true);
      TaskCost t = Run();
      r.acts = saved;
      return t;
    };
    lc.fused = fused(1);
    lc.fused_next = lc.fused;
    if (next >= 0) {
      const TaskCost two = fused(2);
      lc.fused_next.ns = two.ns - lc.fused.ns;
      lc.fused_next.ep_ns = two.ep_ns - lc.fused.ep_ns;
      lc.fused_next.ep_exposed_ns = two.ep_exposed_ns - lc.fused.ep_exposed_ns;
      lc.fused_next.ops = two.ops - lc.fused.ops;
      lc.fused_next.bwd_after_fwd_ns = two.bwd_after_fwd_ns - lc.fused.bwd_after_fwd_ns;
    }
    r.acts.clear();
    return lc;
  }

  TaskCost ProbeEnds(bool head, bool backward) {
    Block& b = r.block;
    b.Clear();
    int32_t chain = -1;
    if (head) e.AddHead(b, chain, 0, backward);
    else e.AddEmbedding(b, chain, 0, backward);
    return Run();
  }

  static CostProbe All(const EngineImpl& e, const RunConfig& config, const std::vector<double>& popularity,
                       const CostProbe* layers);
  CostProbe Layers(const RunConfig& config, const std::vector<double>& popularity);
  static void Stages(const EngineImpl& e, CostProbe* out);
};

CostProbe Prober::All(const EngineImpl& e, const RunConfig& config, const std::vector<double>& popularity,
                      const CostProbe* layers) {
  CostProbe out;
  if (layers) {
    out = *layers;
    out.opt_before_ns.clear();
    out.opt_after_ns.clear();
    out.static_bytes.clear();
  } else {
    Prober p(e, 0);
    out = p.Layers(config, popularity);
  }
  Stages(e, &out);
  return out;
}

CostProbe Prober::Layers(const RunConfig& config, const std::vector<double>& popularity) {
  const ModelShape& s = e.shape;
  CostProbe out;
  Prober& p = *this;
  if (s.dense_layers > 0) {
    out.has_dense = true;
    out.dense = p.ProbeLayer(0, s.dense_layers >= 2 ? 1 : -1);
  }
  if (s.experts > 0 && s.dense_layers < s.layers) {
    out.has_moe = true;
    const int first = s.dense_layers, next = first + 1 < s.layers ? first + 1 : -1;
    p.SeedRouting({first, next}, popularity, /*migrated=*/false);  // next = -1: an unused key
    out.moe = p.ProbeLayer(first, next);
  }
  out.embed_fwd = p.ProbeEnds(false, false);
  out.embed_bwd = p.ProbeEnds(false, true);
  out.head_fwd = p.ProbeEnds(true, false);
  out.head_bwd = p.ProbeEnds(true, true);
  out.p2p_send_ns = e.P2PSendNs(s.Node(0) != s.Node(s.RankOf(std::min(1, s.pp - 1), 0, 0)));
  // Per op on the issuing thread, forward and backward ops alike (about as
  // many of each): the framework cost plus the mean of the two gaps.
  out.host_op_ns = e.py_cost_ + (e.gap_fwd_ + e.gap_bwd_) / 2;
  out.host_sync = config.host().sync_before_a2a();
  return out;
}

void Prober::Stages(const EngineImpl& e, CostProbe* out_ptr) {
  const ModelShape& s = e.shape;
  CostProbe& out = *out_ptr;
  for (int st = 0; st < s.pp; ++st) {
    Prober q(e, s.RankOf(st, 0, 0));
    Block& b = q.r.block;
    b.Clear();
    e.BuildOptimizer(q.r, b);
    int grad_norm = -1;
    for (size_t i = 0; i < b.ops.size(); ++i)
      if (b.ops[i].name == kAllReduceGradNorm) grad_norm = int(i);
    TaskCost c = q.Run();
    int64_t before = grad_norm >= 0 ? q.r.end[size_t(grad_norm)] - kBaseTime : c.ns;
    out.opt_before_ns.push_back(before);
    out.opt_after_ns.push_back(c.ns - before);
    // The EP position holding the most redundant copies (none without them).
    double most = 0;
    const int positions = e.cfg.routing().redundant_experts() > 0 ? s.expert_group : 1;
    for (int pos = 0; pos < positions; ++pos) {
      double w = 0, g = 0, o = 0;
      e.StaticMemory(st, &w, &g, &o, positions > 1 ? pos : -1);
      most = std::max(most, w + g + o);
    }
    out.static_bytes.push_back(most);
  }
}

CostProbe ProbeCosts(const RunConfig& config, const std::vector<double>& popularity,
                     const CostProbe* layers) {
  const EngineImpl e(config, /*probe_only=*/true);
  return Prober::All(e, config, popularity, layers);
}

std::vector<LayerCost> ProbeMoeLayers(const RunConfig& config,
                                      const std::vector<std::vector<double>>& popularities) {
  const EngineImpl e(config, /*probe_only=*/true);
  const ModelShape& s = e.shape;
  std::vector<LayerCost> out;
  if (s.experts <= 0 || s.dense_layers >= s.layers) return out;
  out.reserve(popularities.size());
  for (const std::vector<double>& pop : popularities) {
    Prober p(e, 0);  // fresh: no routing or activations of the last probe
    p.SeedRouting({s.dense_layers}, pop, /*migrated=*/true);
    out.push_back(p.ProbeLayer(s.dense_layers, -1));
  }
  return out;
}

}  // namespace moetrace::tracegen
