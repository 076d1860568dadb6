#include "reports/rl_rows.h"

#include <fmt/core.h>

#include "analyzer/human_number.h"
#include "reports/findings.h"

namespace moetrace {
namespace {

std::string Staleness(int32_t k) {
  if (k <= 0) return "0 (synchronous)";
  return fmt::format("{} (StaleSync)", k);
}

std::string PerSecond(double v) { return HumanCount(v) + " tokens/s"; }

}  // namespace

RlRows BuildRlRows(const analysis::Rl& rl, size_t max_iterations) {
  RlRows out;
  if (!rl.present()) return out;
  const int n = rl.iterations_size();
  out.figures.push_back({"Placement", rl.placement(),
                         rl.placement() == "colocated" ? "RL Fusion: cards switch between rollout and training"
                                                       : "rollout and training on their own cards"});
  out.figures.push_back({"Cards", std::to_string(rl.cards()), fmt::format("{} iteration{}", n, n == 1 ? "" : "s")});
  out.figures.push_back({"Staleness", Staleness(rl.staleness()), "weight versions the rollout lagged, max over iterations"});
  // The first iteration has no overlap with a previous one: the steady
  // state is the median of the others (analyzer/rl), so say which it is.
  out.figures.push_back({"Steady-state iteration", FormatDuration(double(rl.iteration_time_ns())),
                         n > 1 ? "median window of the iterations after the first" : "the one iteration's window"});
  out.figures.push_back({"Utilisation", FormatPct(rl.utilization()), "card-time inside a phase / cards x windows"});
  out.figures.push_back({"Long-tail idle", FormatPct(rl.long_tail_idle_share()),
                         "rollout cards done before the longest response, share of card-time"});
  out.figures.push_back({"Switch", FormatPct(rl.switch_share()), "resharding and weight sync, share of the windows"});
  if (rl.has_generated_tokens_per_s()) {
    out.figures.push_back({"Generated", PerSecond(rl.generated_tokens_per_s()), "response tokens per second of windows"});
  }
  if (rl.has_trained_tokens_per_s()) {
    out.figures.push_back({"Trained", PerSecond(rl.trained_tokens_per_s()), "prompt + response tokens trained per second"});
  }
  for (int i = 0; i < n; ++i) {
    if (out.iterations.size() >= max_iterations) {
      out.more_iterations = static_cast<size_t>(n - i);
      break;
    }
    const analysis::RlIteration& it = rl.iterations(i);
    RlIterationRows rows;
    rows.iteration = it.iteration();
    rows.summary = fmt::format("window {}, utilisation {}, long-tail idle {} card-time, switch {}, staleness {}",
                               FormatDuration(double(it.time_ns())), FormatPct(it.utilization()),
                               FormatDuration(double(it.long_tail_idle_card_ns())), FormatDuration(double(it.switch_ns())),
                               it.staleness());
    if (it.has_generated_tokens()) rows.summary += fmt::format(", {} tokens generated", HumanCount(double(it.generated_tokens())));
    if (it.has_trained_tokens()) rows.summary += fmt::format(", {} tokens trained", HumanCount(double(it.trained_tokens())));
    for (const analysis::RlPhase& p : it.phases()) {
      // With staleness a rollout starts before its window does: negative.
      rows.phases.push_back({p.task(), p.role(), FormatDuration(double(p.start_ns() - it.start_ns())),
                             FormatDuration(double(p.time_ns())), FormatPct(p.share()), std::to_string(p.cards()),
                             FormatDuration(double(p.card_ns()))});
    }
    out.iterations.push_back(std::move(rows));
  }
  return out;
}

}  // namespace moetrace
