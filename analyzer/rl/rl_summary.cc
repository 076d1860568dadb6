#include "analyzer/rl/rl_summary.h"

#include <fmt/format.h>

#include "analyzer/human_number.h"

namespace moetrace::rl {
namespace {

std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string Pct(double r) { return fmt::format("{:.1f} %", 100.0 * r); }

}  // namespace

std::string FormatRlSummary(const analysis::Rl& rl) {
  if (!rl.present() || rl.iterations_size() == 0) return "";
  std::string s = fmt::format("RL: {} iterations on {} cards, {}, staleness {}\n",
                              rl.iterations_size(), rl.cards(), rl.placement(), rl.staleness());
  s += fmt::format("  iteration time    {}   (steady state)\n",
                   Ms(static_cast<double>(rl.iteration_time_ns())));
  s += fmt::format("  utilisation       {}   (long-tail idle {}, switch {} of the time)\n",
                   Pct(rl.utilization()), Pct(rl.long_tail_idle_share()), Pct(rl.switch_share()));
  if (rl.has_generated_tokens_per_s()) {
    s += fmt::format("  generated         {} tokens/s\n", HumanCount(rl.generated_tokens_per_s()));
  }
  if (rl.has_trained_tokens_per_s()) {
    s += fmt::format("  trained           {} tokens/s\n", HumanCount(rl.trained_tokens_per_s()));
  }
  // The last iteration's phases: the steady state, past the first's warm-up.
  const analysis::RlIteration& last = rl.iterations(rl.iterations_size() - 1);
  s += fmt::format("  iteration {} phases:", last.iteration());
  for (const analysis::RlPhase& p : last.phases()) {
    s += fmt::format(" {} {}", p.task(), Pct(p.share()));
    if (&p != &last.phases(last.phases_size() - 1)) s += ",";
  }
  s += "\n";
  return s;
}

}  // namespace moetrace::rl
