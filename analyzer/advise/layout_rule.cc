#include "analyzer/advise/layout_rule.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/search/search.h"
#include "analyzer/search/verify.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/noop_layers.h"

namespace moetrace::advise {
namespace {

using search::Figures;
using search::Layout;

int Changes(const Layout& a, const Layout& b) {
  return (a.tp != b.tp) + (a.pp != b.pp) + (a.vpp != b.vpp) + (a.ep != b.ep) + (a.dp != b.dp) +
         (a.mbs != b.mbs) + (a.extend != b.extend) + (a.swap != b.swap) +
         (a.schedule != b.schedule) + (a.a2a != b.a2a) + (a.recompute != b.recompute);
}

// The RunConfig keys that take `to` from `from` (what `--set` would apply).
std::vector<std::string> ChangedKeys(const tracegen::RunConfig& from, const tracegen::RunConfig& to) {
  std::vector<std::string> out;
  const auto& a = from.parallel();
  const auto& b = to.parallel();
  auto num = [&](const char* key, int64_t x, int64_t y) {
    if (x != y) out.push_back(fmt::format("{}={}", key, y));
  };
  auto str = [&](const char* key, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(fmt::format("{}={}", key, y));
  };
  auto flag = [&](const char* key, bool x, bool y) {
    if (x != y) out.push_back(fmt::format("{}={}", key, y ? "true" : "false"));
  };
  num("parallel.tp", a.tp(), b.tp());
  num("parallel.pp", a.pp(), b.pp());
  num("parallel.vpp", std::max(1, a.vpp()), b.vpp());
  num("parallel.dp", a.dp(), b.dp());
  num("parallel.ep", a.ep(), b.ep());
  flag("parallel.tp_extend_ep", a.tp_extend_ep(), b.tp_extend_ep());
  num("parallel.micro_batch_size", a.micro_batch_size(), b.micro_batch_size());
  str("parallel.layers_per_stage", a.layers_per_stage(), b.layers_per_stage());
  // ApplyLayout clears the padding on other slices: replaying the list
  // without this key would keep a padding that no longer divides.
  str("parallel.noop_layers", a.noop_layers(), b.noop_layers());
  // Likewise the MTP's stage: back to the last one (-1) on other slices.
  num("parallel.mtp_stage", a.has_mtp_stage() ? a.mtp_stage() : -1, b.has_mtp_stage() ? b.mtp_stage() : -1);
  str("schedule.kind", from.schedule().kind(), to.schedule().kind());
  str("comm.a2a", from.comm().a2a(), to.comm().a2a());
  str("memory.recompute", from.memory().recompute(), to.memory().recompute());
  flag("memory.swap", from.memory().swap(), to.memory().swap());
  return out;
}

// MindSpeed's arguments for `to`, with its noop padding: MindSpeed counts
// the noop layers in the layers a virtual stage holds, and a padding the
// layout does not keep (ApplyLayout) is for the configured slices only.
std::string MegatronKnobs(const tracegen::RunConfig& from, const tracegen::RunConfig& to, const Layout& l) {
  const std::string& noop = to.parallel().noop_layers();
  std::vector<int> idx;
  std::string error;
  tracegen::ParseNoopLayers(noop, &idx, &error);  // validated with the config
  const int padded = to.model().num_layers() + int(idx.size());
  std::string s = search::MindSpeedArgs(l, padded);
  if (!noop.empty()) s += " --noop-layers " + noop;
  else if (!from.parallel().noop_layers().empty()) s += " (drop --noop-layers: its padding is for the configured stages)";
  return s;
}

std::string Row(const char* what, const Figures& f) {
  return fmt::format("{}: step {:.3f} ms, {:.1f} % MFU, peak {:.2f} GiB", what, f.step_s * 1e3, 100 * f.mfu,
                     f.peak_bytes / 1073741824.0);
}

// Verification is tracegen's pass 1 over every rank (30-300 s CPU a
// layout at 6,144 ranks of 718B): on large worlds the best estimate only.
int VerifyCount(int cards) { return cards <= 1024 ? 3 : 1; }

}  // namespace

namespace {

// Within this of the recorded step, the model's absolute prediction is
// taken as calibrated (confidence 0.5 for a model-based proposal, else 0.3).
constexpr double kModelAgrees = 0.25;

std::optional<Proposal> Propose(const tracegen::RunConfig& trace_config, bool simulate, int threads,
                                const RecordedStep* recorded) {
  tracegen::RunConfig base = trace_config;
  tracegen::ResolveHardware(&base);
  base.set_steps(1);  // the simulations compare one step each
  const int cards = base.parallel().world_size();
  const search::Space space = search::MakeSpace(base, cards, {});
  search::SearchOptions so;
  so.top = 64;  // enough to find the ties of the best
  so.verify = 0;
  so.threads = threads;
  const search::SearchResult r = search::RunSearch(base, space, so);
  if (r.top.empty()) return std::nullopt;
  const Layout mine = search::LayoutOf(base);
  const double best_estimate = r.top[0].estimate.step_s;
  // The configured layout's estimate (not in the ranked list when it does
  // not fit by the estimate, or is outside the default space).
  Figures mine_estimate;
  const bool mine_estimated = r.configured.has_value();
  if (mine_estimated) mine_estimate = r.configured->estimate;
  if (mine_estimated && mine_estimate.step_s < (1 + kLayoutEvidence) * best_estimate) return std::nullopt;

  // Ties of the best estimate, fewest changes first.
  std::vector<const search::Ranked*> tied;
  for (const search::Ranked& x : r.top) {
    if (x.estimate.step_s <= (1 + kLayoutTie) * best_estimate) tied.push_back(&x);
  }
  std::stable_sort(tied.begin(), tied.end(), [&](const search::Ranked* a, const search::Ranked* b) {
    return Changes(a->layout, mine) < Changes(b->layout, mine);
  });

  const search::Ranked* chosen = tied[0];
  std::optional<Figures> before, after;
  std::string verified;
  if (simulate) {
    before = search::Simulate(base, threads);
    const int k = std::min<int>(VerifyCount(cards), int(tied.size()));
    // Then the next best estimates, when the ties are fewer than k.
    std::vector<const search::Ranked*> verify(tied.begin(), tied.begin() + k);
    for (const search::Ranked& x : r.top) {
      if (int(verify.size()) >= VerifyCount(cards)) break;
      if (std::find(verify.begin(), verify.end(), &x) == verify.end()) verify.push_back(&x);
    }
    for (const search::Ranked* x : verify) {
      const Figures f = search::Simulate(search::ApplyLayout(base, x->layout), threads);
      verified += fmt::format("  #{} {}: estimated {:.3f} ms, {}\n", x->rank, search::Describe(x->layout),
                              x->estimate.step_s * 1e3, Row("simulated", f));
      // The first to fit and beat the others by more than a tie (earlier:
      // fewer changes).
      if (f.fits && (!after || f.step_s < (1 - kLayoutTie) * after->step_s)) {
        after = f;
        chosen = x;
      }
    }
    if (!after) return std::nullopt;  // none of the verified fits
  }

  const tracegen::RunConfig next = search::ApplyLayout(base, chosen->layout);
  Proposal p;
  p.rule = "layout";
  p.title = fmt::format("change the layout to {} ({}searched on {} cards: {})", search::Describe(chosen->layout),
                        recorded ? "model-based, " : "", cards,
                        mine_estimated ? fmt::format("the configured one ranks {} of the {} that fit",
                                                     r.configured->rank, r.feasible)
                                       : fmt::format("the configured one is not among the {} that fit",
                                                     r.feasible));
  p.knob = MegatronKnobs(base, next, chosen->layout);
  p.config = ChangedKeys(base, next);
  p.fixes = "cluster.step_time_ns.max";
  p.evidence = {{"search.feasible_layouts", double(r.feasible)},
                {"search.best_estimate_step_ns", 1e9 * best_estimate}};
  if (mine_estimated) {
    p.evidence.push_back({"search.configured_rank", double(r.configured->rank)});
    p.evidence.push_back({"search.configured_estimate_step_ns", 1e9 * mine_estimate.step_s});
  }
  p.detail = fmt::format("configured {}\n", search::Describe(mine));
  if (before) {
    p.detail += "  " + Row("simulated", *before) + "\n";
    p.detail += "verified by tracegen's full simulation (one step, every rank):\n" + verified;
    p.predicted = true;
    p.step_before_ns = int64_t(before->step_s * 1e9);
    p.step_after_ns = int64_t(after->step_s * 1e9);
    p.gain = p.step_before_ns > 0  // a zero step (nothing simulated) is no gain, not NaN
                 ? double(p.step_before_ns - p.step_after_ns) / double(p.step_before_ns)
                 : 0;
    p.peak_before_bytes = int64_t(before->peak_bytes);
    p.peak_after_bytes = int64_t(after->peak_bytes);
    p.confidence = 0.9;  // tracegen's own model, as every regenerated proposal
    if (recorded && recorded->step_ns > 0 && p.step_before_ns > 0) {
      // Model-based: the recorded step is the truth before; the model says
      // by how much the layout changes it. Its peaks are the model's, not
      // the trace's: not quoted as a prediction of the recorded run.
      const double model_over_recorded = double(p.step_before_ns) / double(recorded->step_ns);
      const double ratio = double(p.step_after_ns) / double(p.step_before_ns);
      const bool calibrated = std::abs(model_over_recorded - 1) <= kModelAgrees;
      std::string head;
      for (const std::string& n : recorded->notes) head += "note: " + n + "\n";
      if (!calibrated) {
        head += fmt::format("note: the model is {:.3f} times the recorded step: not calibrated to this "
                            "job (its hardware.* and model keys), so only the ratio of its layouts is "
                            "used, with confidence 0.3\n",
                            model_over_recorded);
      }
      head += fmt::format(
          "model-based: the trace's own step {:.3f} ms (cluster.step_time_ns.max), the model's {:.3f} ms "
          "for the configured layout (model / recorded = {:.3f}); the proposal scales the recorded step "
          "by the simulated ratio {:.3f} / {:.3f} = {:.3f}\n",
          recorded->step_ns / 1e6, p.step_before_ns / 1e6, model_over_recorded, p.step_after_ns / 1e6,
          p.step_before_ns / 1e6, ratio);
      p.detail = head + p.detail;
      p.evidence.push_back({"recorded cluster.step_time_ns.max", double(recorded->step_ns)});
      p.evidence.push_back({"model step_ns of the configured layout", double(p.step_before_ns)});
      p.step_before_ns = recorded->step_ns;
      p.step_after_ns = int64_t(std::llround(double(recorded->step_ns) * ratio));
      p.peak_before_bytes = -1;
      p.peak_after_bytes = -1;
      p.confidence = calibrated ? 0.5 : 0.3;
    } else if (recorded) {
      // No recorded step to compare with: the model's steps alone.
      std::string head;
      for (const std::string& n : recorded->notes) head += "note: " + n + "\n";
      p.detail = head + "model-based: the trace records no step time; the steps are the model's\n" + p.detail;
      p.confidence = 0.3;
    }
    p.fixes_before = double(p.step_before_ns);
    p.fixes_after = double(p.step_after_ns);
  } else {
    p.detail += fmt::format("best estimate {:.3f} ms (not simulated)\n", best_estimate * 1e3);
    if (recorded) {
      std::string head;
      for (const std::string& n : recorded->notes) head += "note: " + n + "\n";
      p.detail = head + fmt::format("model-based: the trace's own step {:.3f} ms; not simulated\n",
                                    recorded->step_ns / 1e6) + p.detail;
    }
  }
  // No CPU seconds here: advise's output (and the report) must be the same
  // on every run and process count.
  p.detail += fmt::format("estimated {} valid layouts, global batch {} fixed", r.valid, r.global_batch);
  return p;
}

}  // namespace

namespace {

std::optional<Proposal> Guarded(const tracegen::RunConfig& trace_config, bool simulate, int threads,
                                const RecordedStep* recorded) {
  try {
    return Propose(trace_config, simulate, threads, recorded);
  } catch (const InputError& e) {
    // A configuration the search cannot take (e.g. an unknown hardware
    // preset): the other rules still run; this one is listed as not
    // proposed, with the reason.
    Proposal p;
    p.rule = "layout";
    p.title = "change the layout";
    p.fixes = "cluster.step_time_ns.max";
    p.not_proposed = std::string("no layout search on this configuration: ") + e.what();
    return p;
  }
}

}  // namespace

std::optional<Proposal> LayoutProposal(const tracegen::RunConfig& trace_config, bool simulate, int threads) {
  return Guarded(trace_config, simulate, threads, nullptr);
}

std::optional<Proposal> LayoutProposal(const tracegen::RunConfig& config, bool simulate, int threads,
                                       const RecordedStep& recorded) {
  return Guarded(config, simulate, threads, &recorded);
}

}  // namespace moetrace::advise
