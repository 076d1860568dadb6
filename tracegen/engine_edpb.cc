// EDPB's data and pipeline parts in the engine: the attention work of each
// (DP rank, micro-batch) from the packed documents (tracegen/documents.h,
// re-arranged across DP with EDPB), the cost-balanced layer split per
// (virtual) stage (tracegen/stage_split.h) from the engine's own probed op
// costs, where the MTP modules' layers run, and their input ops.
#include <algorithm>

#include "tracegen/config.h"
#include "tracegen/engine_internal.h"
#include "tracegen/mtp_stage.h"
#include "tracegen/probe.h"
#include "tracegen/routing.h"
#include "tracegen/split_schedule.h"
#include "tracegen/stage_split.h"

namespace moetrace::tracegen {

double EngineImpl::AttentionFactor(RankSim& r, int mb) const {
  if (!docs_.Active()) return 1.0;
  if (r.attention_step != r.step || r.attention == nullptr) {
    std::lock_guard<std::mutex> lock(docs_mu_);
    auto it = attention_.find(r.step);
    if (it == attention_.end()) it = attention_.emplace(r.step, docs_.AttentionFactors(r.step)).first;
    r.attention = &it->second;
    r.attention_step = r.step;
  }
  return (*r.attention)[size_t(shape.DpIndex(r.rank)) * shape.micro_batches + size_t(mb)];
}

void EngineImpl::BalanceStages() {
  if (!BalancedSplitRuns(cfg)) return;  // the same test Validate uses for the padding
  // The costs EDPB's planner sees: each layer kind's forward + backward on
  // one rank with its peers in step (probe.cc: the engine's own op costs).
  // Dense layers, the embedding and the heads from one probe; each MoE
  // layer (and MTP module) from its own probe under the routing the run
  // will have: the layer's popularity at the first migration point (what
  // EngineImpl::Placement predicts from; step 0 without EDPB) placed as the
  // run places it (EDPB's migration plan from the contiguous start, else
  // contiguous), so the layer costs what its most loaded EP rank after
  // migration makes it. A
  // split from balanced-routing costs lands the layers that migration
  // leaves heaviest together (bench/README.md, "EDPB's stage split").
  std::vector<double> uniform(size_t(std::max(0, shape.experts)), shape.experts > 0 ? 1.0 / shape.experts : 0.0);
  const CostProbe probe = ProbeCosts(cfg, uniform);
  const bool edpb = cfg.routing().edpb();
  const int at = edpb ? std::max(1, cfg.routing().edpb_interval()) - 1 : 0;
  std::vector<int> moe_layers;  // model layers, then the MTP modules'
  for (int l = 0; l < shape.layers; ++l)
    if (shape.IsMoe(l)) moe_layers.push_back(l);
  if (shape.experts > 0)
    for (int m = 0; m < mtp_; ++m) moe_layers.push_back(shape.layers + m);
  std::vector<std::vector<double>> pops;
  pops.reserve(moe_layers.size());
  for (int l : moe_layers) {
    std::vector<double> pop = routing.Popularity(l, at);
    if (edpb) {  // the experts in the order of EDPB's placement: contiguous = balanced
      const std::vector<int32_t> place = Placement(l, at + 1);  // the first migration's plan
      std::vector<double> ordered;
      ordered.reserve(pop.size());
      for (int g = 0; g < shape.expert_group; ++g)
        for (size_t e = 0; e < pop.size(); ++e)
          if (place[e] == g) ordered.push_back(pop[e]);
      pop = std::move(ordered);
    }
    pops.push_back(std::move(pop));
  }
  const std::vector<LayerCost> moe = ProbeMoeLayers(cfg, pops);
  // Each way: the pipeline's tasks are a slice's forward or backward.
  SplitCosts sc;
  sc.fwd.assign(size_t(shape.layers), double(probe.dense.fwd.ns));
  sc.bwd.assign(size_t(shape.layers), double(probe.dense.bwd.ns));
  sc.last_fwd = double(probe.head_fwd.ns);
  sc.last_bwd = double(probe.head_bwd.ns);
  for (size_t i = 0; i < moe.size() && i < moe_layers.size(); ++i) {
    if (moe_layers[i] < shape.layers) {
      sc.fwd[size_t(moe_layers[i])] = double(moe[i].fwd.ns);
      sc.bwd[size_t(moe_layers[i])] = double(moe[i].bwd.ns);
    } else {  // an MTP module: its layer where the MTP runs, the shared head again on the last slice
      sc.mtp_fwd += double(moe[i].fwd.ns);
      sc.mtp_bwd += double(moe[i].bwd.ns);
    }
  }
  if (shape.experts <= 0) {
    sc.mtp_fwd += mtp_ * double(probe.dense.fwd.ns);
    sc.mtp_bwd += mtp_ * double(probe.dense.bwd.ns);
  }
  // Megatron runs every MTP module's output head and loss in the loss
  // stage's post-processing, wherever the MTP layers are (mtp_stage.h).
  sc.last_fwd += mtp_ * double(probe.head_fwd.ns);
  sc.last_bwd += mtp_ * double(probe.head_bwd.ns);
  // The first slice: the embedding. The MTP module's projection is a few
  // per cent of a layer and not probed.
  sc.first_fwd = double(probe.embed_fwd.ns);
  sc.first_bwd = double(probe.embed_bwd.ns);
  std::vector<double> cost(size_t(shape.layers));
  for (int l = 0; l < shape.layers; ++l) cost[size_t(l)] = sc.fwd[size_t(l)] + sc.bwd[size_t(l)];
  // Balancing the ranks' work (BalancedSplit) is where the search starts;
  // the split kept is the one whose pipeline, run by the schedule's own
  // task order (split_schedule.h), ends first: with skewed routing the
  // most loaded rank's work does not set the step, the waits between
  // slices do. The config's own split (MindSpeed's noop-layer padding, or
  // the even split) is the first start, so it is kept unless beaten.
  std::vector<int> counts = BalancedSplit(cost, sc.first_fwd + sc.first_bwd,
                                          sc.last_fwd + sc.last_bwd + sc.mtp_fwd + sc.mtp_bwd, shape.model_stages,
                                          shape.pp, shape.stage_layers);
  // Where the MTP layers run is part of the split (Megatron's "...|m|L"
  // layouts): today's last stage first, so it is kept unless beaten; a
  // parallel.mtp_stage given pins it.
  const int last = shape.model_stages - 1;
  std::vector<int> mtp_stages{shape.mtp_stage};
  if (mtp_ > 0 && !cfg.parallel().has_mtp_stage()) mtp_stages = MtpStageCandidates(shape.model_stages, shape.pp);
  for (int& m : mtp_stages) m = m == last ? -1 : m;
  int mtp_stage = -1;
  if (!counts.empty())
    counts = PipelineSplit(sc, {shape.stage_layers, counts}, schedules, shape.pp, mtp_stages, &mtp_stage);
  if (mtp_stage < 0) mtp_stage = last;
  if (counts.empty() || (counts == shape.stage_layers && mtp_stage == shape.mtp_stage)) return;
  shape.SetStageLayers(counts);
  shape.mtp_stage = mtp_stage;
  balanced_split_ = true;
}

void EngineImpl::AddMtpInput(Block& b, int32_t& chain, int mb, int layer, bool backward) const {
  const double N = shape.TokensPerMicroBatch(), Ns = shape.TokensSeqSplit(), h = shape.hidden, t = shape.tp;
  const Phase ph = backward ? Phase::kBackward : Phase::kForward;
  const double g = backward ? 2 : 1;  // the backward computes both input and weight gradients
  Op embed = Compute(kEmbedding, kVector, 0, Ns * h * 4, ph, mb, layer, backward);
  Op norms = Compute(kRMSNorm, kVector, 0, 2 * Ns * h * 4 * (backward ? 1.5 : 1), ph, mb, layer, backward);
  Op proj = Compute(kMatMulMtpProj, kMatMul, g * 2 * N * 2 * h * h / t, g * (2 * h * h / t + 3 * N * h) * 2, ph,
                    mb, layer, backward);
  if (!backward) {
    Add(b, chain, embed);
    Add(b, chain, norms);
    Add(b, chain, proj);
  } else {
    Add(b, chain, proj);
    Add(b, chain, norms);
    Add(b, chain, embed);
  }
}

void EngineImpl::AddMtpHeads(Block& b, int32_t& chain, int mb, bool backward) const {
  if (!MtpApart()) return;
  for (int m = 0; m < mtp_; ++m) AddHead(b, chain, mb, backward);
}

TimeNs EngineImpl::P2PSendNs(bool inter, double scale) const {
  const double bytes = double(shape.TokensSeqSplit()) * shape.hidden * 2 * scale;
  return TimeNs((inter ? hw.alpha_inter_ns() : hw.alpha_intra_ns()) + TransferNs(bytes, inter));
}

}  // namespace moetrace::tracegen
