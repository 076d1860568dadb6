// seed_table's RL rows (issue #16): the published RL post-training effects
// on pangu-ultra-moe-718b-rl, each a pair of plans differing in one knob,
// one calibration (cloudmatrix-384), no per-scenario factor.
//
// Figures come from rl::BuildPlan's ground-truth labels, not from emitted
// traces: the labels are what analyze recovers from the trace (within 0.5%,
// analyzer/rl/rl_ground_truth_test.cc), and a plan costs the actor update's
// pass 1 only (~10 s CPU at 384 cards) where a trace costs ~30 s more.
//
// Throughput = Σ tokens / Σ iteration windows over a run of 8 iterations,
// as analyze's rl.trained_tokens_per_s. Not over "steady" iterations only:
// with partial rollout the first iteration trains only the responses that
// finished and the last drains the rest, so the middle ones train more
// than a batch, and leaving the ends out would flatter StaleSync (by ~10%
// with 6 iterations). "tokens/s" of the publication is read as trained
// tokens (prompt + response, what the actor update consumes) per second per
// job; generated (response) tokens/s are printed next to it.
#include "bench/seed_table_rl.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "tracegen/config.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::bench {
namespace {

using tracegen::BuildConfig;
using tracegen::RunConfig;

constexpr int kIterations = 8;

struct RlResult {
  double trained_per_s = 0, generated_per_s = 0, iteration_s = 0;
  // Mean per iteration, s: rollout span, scoring spans, update span, switch.
  double rollout_s = 0, scoring_s = 0, update_s = 0, switch_s = 0, utilization = 0;
  int cards = 0;
};

RlResult RunRl(std::vector<std::string> sets) {
  sets.push_back("rl.iterations=" + std::to_string(kIterations));
  const RunConfig c = BuildConfig({"pangu-ultra-moe-718b-rl", "", sets, 0});
  const tracegen::rl::Plan plan = tracegen::rl::BuildPlan(c, 2);
  std::map<std::string, double> sum;
  for (const LabeledValue& l : plan.labels) {
    sum[l.key] += l.value;
  }
  RlResult r;
  r.cards = plan.cards;
  const double t = sum["time_ns"] * 1e-9, n = kIterations;
  r.trained_per_s = sum["trained_tokens"] / t;
  r.generated_per_s = sum["generated_tokens"] / t;
  r.iteration_s = t / n;
  r.rollout_s = sum["phases.generate_sequences.time_ns"] * 1e-9 / n;
  r.update_s = sum["phases.update_actor.time_ns"] * 1e-9 / n;
  r.scoring_s = (sum["phases.compute_log_prob.time_ns"] + sum["phases.compute_ref_log_prob.time_ns"]) * 1e-9 / n;
  r.switch_s = sum["switch_ns"] * 1e-9 / n;
  r.utilization = sum["busy_card_ns"] * 1e-9 / (t * plan.cards);
  std::fprintf(stderr,
               "  plan done: %d cards, iteration %.1f s (rollout %.1f, scoring %.1f, update %.1f, switch %.2f), "
               "utilisation %.1f%%, %.0f trained / %.0f generated tokens/s\n",
               r.cards, r.iteration_s, r.rollout_s, r.scoring_s, r.update_s, r.switch_s, 100 * r.utilization, r.trained_per_s,
               r.generated_per_s);
  return r;
}

std::string Tokens(const RlResult& r) {
  return fmt::format("{:.1f} K ({:.1f} K generated)", r.trained_per_s / 1e3, r.generated_per_s / 1e3);
}

}  // namespace

void RlRows(const std::function<bool(const std::string&)>& on, const RowFn& row, SeedFigures* fig) {
  if (!on("rl")) return;
  // One CloudMatrix 384. Separate pools: 256 cards roll out (8 instances
  // of 32), 128 train (TP 8 x PP 8 x DP 2; EP 2 must divide DP, so the
  // split is 128/256 or 256/128, and the rollout is most of the time);
  // colocated: all 384 do both (the preset, DP 6).
  const std::vector<std::string> separate = {"rl.placement=separate", "rl.rollout.cards=256",
                                             "parallel.world_size=128", "parallel.dp=2"};
  std::fprintf(stderr, "RL: separate pools, synchronous\n");
  const RlResult sep = RunRl(separate);
  std::fprintf(stderr, "RL: colocated (RL Fusion), synchronous\n");
  const RlResult fused = RunRl({});
  std::fprintf(stderr, "RL: colocated + StaleSync (staleness 1)\n");
  const RlResult stale = RunRl({"rl.staleness=1"});
  row("RL Fusion", "rl.placement separate (256 rollout + 128 train) -> colocated (384 both), staleness 0",
      "2x cluster utilisation",
      fmt::format("utilisation {:.0f}% -> {:.0f}% ({:.2f}x); {} -> {} tokens/s ({:.2f}x)", 100 * sep.utilization,
                  100 * fused.utilization, fused.utilization / sep.utilization, Tokens(sep), Tokens(fused),
                  fused.trained_per_s / sep.trained_per_s),
      "utilisation: busy card time over cards x iteration time; trained tokens/s over 8 iterations (BuildPlan labels)");
  row("StaleSync", "rl.staleness 0 -> 1 (colocated: partial rollout)", "+50% throughput",
      fmt::format("{} -> {} tokens/s ({:+.1f}%; iteration {:.0f} -> {:.0f} s)", Tokens(fused), Tokens(stale),
                  100 * (stale.trained_per_s / fused.trained_per_s - 1), fused.iteration_s, stale.iteration_s),
      "");
  row("RL Fusion + StaleSync, one CloudMatrix 384", "separate synchronous -> colocated, staleness 1",
      "14.0 K -> 35.0 K tokens/s (2.5x)",
      fmt::format("{} -> {} tokens/s ({:.2f}x)", Tokens(sep), Tokens(stale),
                  stale.trained_per_s / sep.trained_per_s),
      "");
  // Four super-nodes, the same per-card work: 4x the cards, the training
  // DP (6 -> 24) and the prompts per iteration (96 -> 384); 48 rollout
  // instances of 32. The DP gradient all-reduce now crosses super-nodes
  // (inter_node_bandwidth, RoCE).
  std::fprintf(stderr, "RL: four super-nodes, colocated + StaleSync\n");
  const RlResult four = RunRl({"rl.staleness=1", "parallel.world_size=1536", "parallel.dp=24",
                               "parallel.global_batch_size=1536", "rl.prompts_per_iteration=384"});
  row("Scale-out", "1 -> 4 super-nodes (384 -> 1,536 cards, same per-card work; colocated, staleness 1)",
      "35 K -> 127 K tokens/s (91% linear)",
      fmt::format("{} -> {} tokens/s ({:.0f}% linear)", Tokens(stale), Tokens(four),
                  100 * four.trained_per_s / (4 * stale.trained_per_s)),
      "");
  fig->rl_fusion_utilisation_x = fused.utilization / sep.utilization;
  fig->rl_stalesync_x = stale.trained_per_s / fused.trained_per_s;
  fig->rl_both_x = stale.trained_per_s / sep.trained_per_s;
  fig->rl_scaleout_linear_pct = 100 * four.trained_per_s / (4 * stale.trained_per_s);
}

}  // namespace moetrace::bench
