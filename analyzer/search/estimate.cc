#include "analyzer/search/estimate.h"

#include <algorithm>
#include <cmath>

#include "tracegen/model.h"
#include "tracegen/routing.h"

namespace moetrace::search {
namespace {

using tracegen::CostProbe;
using tracegen::LayerCost;
using tracegen::ModelShape;
using tracegen::PipeItem;
using tracegen::PipeTask;
using tracegen::TaskCost;

// Per model stage (slice of layers): its tasks' figures summed over layers.
struct Slice {
  int dense = 0, moe = 0;
  double fwd = 0, bwd = 0, fwd_ops = 0, bwd_ops = 0, fwd_ep = 0, bwd_ep = 0;
  double act = 0, swapped = 0, extra = 0;  // bytes per micro-batch
  double swap_ns = 0;                      // host-link copies of the swapped part, each way
  // Per layer kind (the slice runs its dense layers, then its MoE layers):
  // forward, backward and one swap copy; the embedding and LM head parts.
  double dense_fwd = 0, dense_bwd = 0, dense_swap = 0, moe_fwd = 0, moe_bwd = 0, moe_swap = 0;
  // Per layer kind: the swap-out's start into the forward, the swap-in's
  // reader's start into the backward (LayerCost).
  double dense_out_at = 0, dense_in_slack = 0, moe_out_at = 0, moe_in_slack = 0;
  double pre_fwd = 0, post_fwd = 0, pre_bwd = 0;  // embedding fwd; head fwd; head bwd
};

Slice MakeSlice(const ModelShape& s, const CostProbe& p, int ms) {
  Slice sl;
  for (int l = s.stage_first_layer[ms]; l < s.stage_first_layer[ms] + s.stage_layers[ms]; ++l)
    ++(s.IsMoe(l) ? sl.moe : sl.dense);
  auto add = [&](const LayerCost& c, int n) {
    sl.fwd += double(n) * c.fwd.ns;
    sl.bwd += double(n) * c.bwd.ns;
    sl.fwd_ops += double(n) * c.fwd.ops;
    sl.bwd_ops += double(n) * c.bwd.ops;
    sl.fwd_ep += double(n) * c.fwd.ep_exposed_ns;
    sl.bwd_ep += double(n) * c.bwd.ep_exposed_ns;
    sl.act += n * (c.act_kept - c.act_swapped);
    sl.swapped += n * c.act_swapped;
    sl.swap_ns += double(n) * c.swap_ns;
    if (n > 0) sl.extra = std::max(sl.extra, c.act_extra);
  };
  add(p.dense, sl.dense);
  add(p.moe, sl.moe);
  sl.dense_fwd = double(p.dense.fwd.ns), sl.dense_bwd = double(p.dense.bwd.ns), sl.dense_swap = double(p.dense.swap_ns);
  sl.moe_fwd = double(p.moe.fwd.ns), sl.moe_bwd = double(p.moe.bwd.ns), sl.moe_swap = double(p.moe.swap_ns);
  sl.dense_out_at = double(p.dense.swap_out_at_ns), sl.dense_in_slack = double(p.dense.swap_in_slack_ns);
  sl.moe_out_at = double(p.moe.swap_out_at_ns), sl.moe_in_slack = double(p.moe.swap_in_slack_ns);
  auto ends = [&](const TaskCost& f, const TaskCost& b) {
    sl.fwd += f.ns, sl.bwd += b.ns, sl.fwd_ops += f.ops, sl.bwd_ops += b.ops;
  };
  if (ms == 0) {
    ends(p.embed_fwd, p.embed_bwd);
    sl.pre_fwd = double(p.embed_fwd.ns);
  }
  if (ms == s.model_stages - 1) {
    ends(p.head_fwd, p.head_bwd);
    sl.post_fwd = double(p.head_fwd.ns);
    sl.pre_bwd = double(p.head_bwd.ns);
  }
  return sl;
}

// The copy stream of one pipeline stage, as the engine issues it: a
// forward layer's swap-out starts when the GEMM saving its last swapped
// tensor has run (out_at into the layer); the swap-ins of the next item's
// backward are issued after this item's ops, so they queue behind its
// swap-outs, each starting no earlier than this item's start (the
// device-side trigger), last layer first; a backward layer's first op
// reading a swapped tensor (in_slack into the layer) waits for its own
// swap-in (engine.cc, wait_prefetch).
struct CopyStream {
  double free = 0;               // the copy stream's end so far
  std::vector<double> in_end;    // the prefetched swap-ins, in backward order
  std::vector<double> next_in;   // being filled for the next item

  // Swap-outs of a forward task of `sl` starting at `t0`, its time scaled
  // by `scale` (a fused item shares the device with the other task).
  void Outs(const Slice& sl, double t0, double scale) {
    double t = t0 + sl.pre_fwd * scale;
    auto run = [&](int n, double fwd, double swap, double at) {
      for (int i = 0; i < n; ++i) {
        if (swap > 0) free = std::max(free, t + at * scale) + swap;
        t += fwd * scale;
      }
    };
    run(sl.dense, sl.dense_fwd, sl.dense_swap, sl.dense_out_at);
    run(sl.moe, sl.moe_fwd, sl.moe_swap, sl.moe_out_at);
  }
  // Prefetch for the next item's backward of `sl`.
  void Prefetch(const Slice& sl, double trigger) {
    auto run = [&](int n, double swap) {
      for (int i = 0; i < n; ++i)
        if (swap > 0) next_in.push_back(free = std::max(free, trigger) + swap);
        else next_in.push_back(0);
    };
    run(sl.moe, sl.moe_swap);  // backward order: last layer first
    run(sl.dense, sl.dense_swap);
  }
  // How long a backward of `sl` from `t0` stalls on its swap-ins (the
  // prefetched ones, in_end).
  double Stall(const Slice& sl, double t0, double scale) const {
    double t = t0 + sl.pre_bwd * scale, stall = 0;
    size_t j = 0;
    auto run = [&](int n, double bwd, double slack) {
      for (int i = 0; i < n; ++i, ++j) {
        const double reads = t + slack * scale;
        if (j < in_end.size() && in_end[j] > reads) stall += in_end[j] - reads, t += in_end[j] - reads;
        t += bwd * scale;
      }
    };
    run(sl.moe, sl.moe_bwd, sl.moe_in_slack);
    run(sl.dense, sl.dense_bwd, sl.dense_in_slack);
    return stall;
  }
};

// What fusing a forward of slice `a` with a backward of slice `b` saves:
// the probes' fused pair against the two alone, per layer pair.
double FusedGain(const CostProbe& p, const Slice& a, const Slice& b, double* ep_gain) {
  // k layer pairs fused: the first pair as probed, each further one what
  // the two-layer probe added (segments alternate across layers).
  auto fused = [](const LayerCost& c, int k, auto field) {
    return k <= 0 ? 0.0 : double(field(c.fused)) + double(k - 1) * double(field(c.fused_next));
  };
  auto ns = [](const TaskCost& t) { return t.ns; };
  auto ep = [](const TaskCost& t) { return t.ep_exposed_ns; };
  auto gain = [&](const LayerCost& c, int k) {
    return k * double(c.fwd.ns + c.bwd.ns) - fused(c, k, ns);
  };
  auto ep_gain_of = [&](const LayerCost& c, int k) {
    return k * double(c.fwd.ep_exposed_ns + c.bwd.ep_exposed_ns) - fused(c, k, ep);
  };
  const int moe = std::min(a.moe, b.moe), dense = std::min(a.dense, b.dense);
  *ep_gain = ep_gain_of(p.moe, moe) + ep_gain_of(p.dense, dense);
  return gain(p.moe, moe) + gain(p.dense, dense);
}

}  // namespace

double ModelFlopsPerStep(const tracegen::RunConfig& c) {
  const ModelShape s(c);
  double per_mb = 0;
  for (int l = 0; l < s.layers; ++l) per_mb += s.LayerForwardFlops(l);
  per_mb += 2.0 * s.TokensPerMicroBatch() * s.hidden * s.vocab;
  return per_mb * 3 * double(c.parallel().global_batch_size()) / s.mbs;
}

Estimator::Estimator(const tracegen::RunConfig& base) : base_(base) {
  const auto& m = base.model();
  tracegen::RoutingModel rm;
  rm.seed = base.seed();
  rm.experts = m.num_experts();
  rm.top_k = std::max(1, m.top_k());
  rm.skew = base.routing().skew();
  rm.drift = base.routing().drift();
  if (m.num_experts() > 0)
    for (int l = m.dense_layers(); l < m.num_layers(); ++l) layer_popularity_.push_back(rm.Popularity(l, 0));
}

// The popularity of the MoE layer whose most loaded expert-group member
// (contiguous placement) carries the mean of that load over the layers:
// the probes' layer stands for all of them.
const std::vector<double>& Estimator::Popularity(int g) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = popularity_.find(g);
  if (it != popularity_.end()) return it->second;
  std::vector<double>& out = popularity_[g];
  if (layer_popularity_.empty()) return out;
  const int E = int(layer_popularity_[0].size());
  std::vector<double> hot;
  const int copies = base_.routing().redundant_experts();
  for (const auto& pop : layer_popularity_) {
    std::vector<double> load(g, 0);
    std::vector<int32_t> place = tracegen::ContiguousPlacement(E, g);
    // Redundant copies (the engine's, from the same popularity) share their
    // expert's tokens evenly.
    const tracegen::ExpertCopies c = tracegen::ReplicateExperts(pop, place, g, copies);
    std::vector<int> holders(E, 1);
    for (int32_t e : c.expert) ++holders[e];
    for (int e = 0; e < E; ++e) load[place[e]] += pop[e] / holders[e];
    for (size_t k = 0; k < c.expert.size(); ++k) load[c.position[k]] += pop[c.expert[k]] / holders[c.expert[k]];
    hot.push_back(*std::max_element(load.begin(), load.end()));
  }
  double mean = 0;
  for (double h : hot) mean += h / double(hot.size());
  size_t best = 0;
  for (size_t i = 1; i < hot.size(); ++i)
    if (std::abs(hot[i] - mean) < std::abs(hot[best] - mean)) best = i;
  out = layer_popularity_[best];
  return out;
}

std::shared_ptr<const std::vector<std::vector<PipeItem>>> Estimator::Schedules(int kind, int pp, int vpp,
                                                                               int micro) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = schedules_[{kind, pp, vpp, micro}];
  if (!slot) {
    auto v = std::make_shared<std::vector<std::vector<PipeItem>>>();
    tracegen::ScheduleShape sh{kSchedules[kind], pp, vpp, micro};
    for (int s = 0; s < pp; ++s) v->push_back(tracegen::StageSchedule(sh, s));
    slot = v;
  }
  return slot;
}

std::shared_ptr<const CostProbe> Estimator::LayerProbe(uint64_t key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = layer_probes_.find(key);
  return it == layer_probes_.end() ? nullptr : it->second;
}

void Estimator::KeepLayerProbe(uint64_t key, const CostProbe& p) const {
  std::lock_guard<std::mutex> lock(mu_);
  layer_probes_.emplace(key, std::make_shared<const CostProbe>(p));
}

bool Estimator::Estimate(const Layout& l, Figures* f) const {
  const tracegen::RunConfig c = ApplyLayout(base_, l);
  const ModelShape s(c);
  // Everything the layer probes depend on (PP only through the PP send).
  const uint64_t key = (uint64_t(l.tp) << 56) ^ (uint64_t(l.pp) << 48) ^ (uint64_t(l.dp) << 28) ^
                       (uint64_t(l.ep) << 12) ^ (uint64_t(l.mbs) << 6) ^ (uint64_t(l.extend) << 5) ^
                       (uint64_t(l.swap) << 4) ^ (uint64_t(l.a2a) << 2) ^ uint64_t(l.recompute);
  const bool cacheable = l.tp < 256 && l.pp < 256 && l.dp < (1 << 20) && l.ep < (1 << 16) && l.mbs < 64;
  std::shared_ptr<const CostProbe> cached = cacheable ? LayerProbe(key) : nullptr;
  const CostProbe p = tracegen::ProbeCosts(c, Popularity(s.expert_group), cached.get());
  if (!cached && cacheable) KeepLayerProbe(key, p);
  const int M = s.model_stages, m = s.micro_batches, pp = s.pp;
  std::vector<Slice> slices;
  slices.reserve(M);
  for (int ms = 0; ms < M; ++ms) slices.push_back(MakeSlice(s, p, ms));
  auto items = Schedules(l.schedule, pp, s.vpp, m);

  // Task-level simulation of the stages: a task starts when its stage is
  // free and its input arrived (the previous slice's send), and cannot end
  // before the host has issued its ops (the host runs ahead otherwise).
  const double send = double(p.p2p_send_ns), py = double(p.host_op_ns);
  std::vector<double> fwd_end(size_t(m) * M, -1), bwd_end(size_t(m) * M, -1);
  std::vector<double> dev(pp, 0), host(pp, 0), busy(pp, 0), ep(pp, 0);
  bool swapping = false;
  for (const Slice& sl : slices) swapping |= sl.swap_ns > 0;
  std::vector<CopyStream> copies(swapping ? pp : 0);
  std::vector<size_t> next(pp, 0);
  // `with`: the item's other task; a fused item may hold a last slice's
  // forward and backward of one micro-batch (the engine issues them as one
  // block, with no wait between them).
  auto ready = [&](const PipeTask& t, const PipeTask* with, double* at) {
    double v = 0;
    if (t.backward && t.model_stage == M - 1 && with && !with->backward && with->mb == t.mb &&
        with->model_stage == t.model_stage)
      return true;
    if (!t.backward) {
      if (t.model_stage > 0) {
        const double u = fwd_end[size_t(t.mb) * M + t.model_stage - 1];
        if (u < 0) return false;
        v = u + send;
      }
    } else if (t.model_stage == M - 1) {
      v = fwd_end[size_t(t.mb) * M + t.model_stage];
      if (v < 0) return false;
    } else {
      double b = bwd_end[size_t(t.mb) * M + t.model_stage + 1];
      if (b < 0) return false;
      v = b + send;
    }
    *at = std::max(*at, v);
    return true;
  };
  size_t left = 0;
  for (const auto& v : *items) left += v.size();
  while (left > 0) {
    bool moved = false;
    for (int st = 0; st < pp; ++st) {
      const auto& list = (*items)[st];
      while (next[st] < list.size()) {
        const PipeItem& it = list[next[st]];
        double start = dev[st];
        if (!ready(it.a, it.fused ? &it.b : nullptr, &start) || (it.fused && !ready(it.b, &it.a, &start))) break;
        const Slice& a = slices[it.a.model_stage];
        double dur = it.a.backward ? a.bwd : a.fwd;
        double ops = it.a.backward ? a.bwd_ops : a.fwd_ops;
        double exposed = it.a.backward ? a.bwd_ep : a.fwd_ep;
        if (it.fused) {
          const Slice& b = slices[it.b.model_stage];
          const Slice& fw = it.a.backward ? b : a;
          const Slice& bw = it.a.backward ? a : b;
          // The last slice's forward and backward of one micro-batch run one
          // after the other (the backward needs the loss: BuildItem).
          const bool chained = it.a.mb == it.b.mb && it.a.model_stage == it.b.model_stage;
          double ep_gain = 0;
          const double gain = chained ? 0.0 : FusedGain(p, fw, bw, &ep_gain);
          dur += (it.b.backward ? b.bwd : b.fwd) - gain;
          ops += it.b.backward ? b.bwd_ops : b.fwd_ops;
          exposed += (it.b.backward ? b.bwd_ep : b.fwd_ep) - ep_gain;
        }
        host[st] += ops * py;
        double end = std::max(start + dur, host[st]);
        // Swap (the copy stream, in issue order): a backward layer waits for
        // the swap-in the previous item prefetched; this item's swap-outs
        // follow its forward layers, then the prefetch for the next item.
        if (swapping) {
          CopyStream& cs = copies[st];
          // A fused item interleaves its two tasks: each spans all of it;
          // a chained one (last slice, one micro-batch) runs the forward,
          // then the backward.
          const bool chained = it.fused && it.a.mb == it.b.mb && it.a.model_stage == it.b.model_stage;
          auto scale = [&](const PipeTask& t, double span) {
            const double own = t.backward ? slices[t.model_stage].bwd : slices[t.model_stage].fwd;
            return it.fused && !chained && own > 0 ? span / own : 1.0;
          };
          const double bwd_from = chained ? start + slices[it.a.model_stage].fwd : start;
          double stall = 0;
          for (const PipeTask* t : {&it.a, it.fused ? &it.b : nullptr})
            if (t && t->backward) stall += cs.Stall(slices[t->model_stage], bwd_from, scale(*t, dur));
          end = std::max(start + dur + stall, host[st]);
          for (const PipeTask* t : {&it.a, it.fused ? &it.b : nullptr})
            if (t && !t->backward) cs.Outs(slices[t->model_stage], start, scale(*t, dur + stall));
          cs.next_in.clear();
          if (next[st] + 1 < list.size()) {
            const PipeItem& nx = list[next[st] + 1];
            for (const PipeTask* t : {&nx.a, nx.fused ? &nx.b : nullptr})
              if (t && t->backward) cs.Prefetch(slices[t->model_stage], start);
          }
          std::swap(cs.in_end, cs.next_in);
        }
        if (p.host_sync) host[st] = end;  // it waited for the device at each MoE layer
        dev[st] = end;
        busy[st] += dur;
        ep[st] += exposed;
        // A fused item's chain that ends first passes its output on then,
        // ahead of the item's end. The lag builds up pair by pair when the
        // chains have unequal segment counts (full recompute adds the
        // backward two all-to-alls per MoE layer): the fused probes' lag for
        // the first layer pair and what each further pair adds; a layer only
        // one chain has runs once the other chain has run out.
        double lag = 0;
        if (it.fused && !(it.a.mb == it.b.mb && it.a.model_stage == it.b.model_stage)) {
          const Slice& fw = slices[(it.a.backward ? it.b : it.a).model_stage];
          const Slice& bw = slices[(it.a.backward ? it.a : it.b).model_stage];
          auto pairs = [](const LayerCost& c, int k) {
            return k <= 0 ? 0.0
                          : double(c.fused.bwd_after_fwd_ns) + double(k - 1) * double(c.fused_next.bwd_after_fwd_ns);
          };
          const int km = std::min(fw.moe, bw.moe), kd = std::min(fw.dense, bw.dense);
          lag = pairs(p.moe, km) + pairs(p.dense, kd) + (bw.moe - km) * bw.moe_bwd + (bw.dense - kd) * bw.dense_bwd -
                (fw.moe - km) * fw.moe_fwd - (fw.dense - kd) * fw.dense_fwd;
        }
        for (const PipeTask* t : {&it.a, it.fused ? &it.b : nullptr}) {
          if (!t) continue;
          const double early = t->backward ? std::max(0.0, -lag) : std::max(0.0, lag);
          (t->backward ? bwd_end : fwd_end)[size_t(t->mb) * M + t->model_stage] = std::max(start, end - early);
        }
        ++next[st];
        --left;
        moved = true;
      }
    }
    if (!moved) return false;  // a schedule that deadlocks: cannot happen with tracegen's
  }
  // Optimizer: gradient reduce-scatters, the world grad-norm all-reduce
  // (everyone waits for the last stage), then AdamW and the all-gathers.
  double sync = 0, after = 0;
  for (int st = 0; st < pp; ++st) {
    sync = std::max(sync, std::max(dev[st], host[st]) + double(p.opt_before_ns[st]));
    after = std::max(after, double(p.opt_after_ns[st]));
  }
  const double step_ns = sync + after;

  // Memory: static + the activations the schedule holds at once, with a
  // backward's transient (swapped-in tensors of its slice, one layer's
  // recompute) on top.
  double peak = 0;
  for (int st = 0; st < pp; ++st) {
    double held = 0, top = 0;
    for (const PipeItem& it : (*items)[st]) {
      for (const PipeTask* t : {&it.a, it.fused ? &it.b : nullptr}) {
        if (!t) continue;
        const Slice& sl = slices[t->model_stage];
        if (!t->backward) {
          held += sl.act;
          top = std::max(top, held);
        } else {
          top = std::max(top, held + sl.swapped + sl.extra);
          held -= sl.act;
        }
      }
    }
    peak = std::max(peak, p.static_bytes[st] + top);
  }
  double ep_sum = 0, bubble_sum = 0;
  for (int st = 0; st < pp; ++st) {
    ep_sum += ep[st];
    bubble_sum += std::max(0.0, dev[st] - busy[st]);
  }
  f->step_s = step_ns * 1e-9;
  const double tokens = double(c.parallel().global_batch_size()) * s.seq;
  f->tokens_per_s = tokens / f->step_s;
  f->mfu = ModelFlopsPerStep(c) / (f->step_s * s.world * c.hardware().peak_flops());
  f->peak_bytes = peak;
  f->ep_exposed_s = ep_sum / pp * 1e-9;
  f->bubble_s = bubble_sum / pp * 1e-9;
  f->fits = peak <= c.hardware().hbm_bytes();
  return true;
}

}  // namespace moetrace::search
