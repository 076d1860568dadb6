// The RL rules of `moetrace advise` (issue #16 item 3): colocation,
// staleness, the card split between rollout and training, the rollout
// layout and batch. Each fires on the analysis' `rl` section (its JSON paths
// are the evidence) and, when the run's model is known (a tracegen trace's
// own RunConfig, or --config / --preset for a recorded trace), is predicted
// by building the RL plan of the changed config and reading the `rl`
// section analyze would compute from its trace (PredictRl).
// (rl_predict.h: why the plan and not a full generate).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "analyzer/advise/rl_predict.h"
#include "analyzer/proto/analysis.pb.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::advise {

// Evidence thresholds: below them a rule stays silent.
inline constexpr double kRlLowUtilization = 0.70;   // rl.utilization (separate pools)
inline constexpr double kRlPoolWaiting = 0.30;      // a pool's idle share of its card-time
inline constexpr double kRlLongTailIdle = 0.05;     // rl.long_tail_idle_share
inline constexpr double kRlSplitImbalance = 0.15;   // |rollout - training| / the longer (separate)
inline constexpr double kRlRolloutShare = 0.25;     // generate_sequences' share of the iteration

// The figure every RL proposal is judged by: the mean iteration window,
// Σ rl.iterations[].time_ns / iterations (the run's span over its
// iterations). Not rl.iteration_time_ns (the steady-state median): with
// partial rollout the windows alternate short and long and the last one
// drains, and the mean is what the same work costs.
int64_t MeanIterationNs(const analysis::Rl& rl);

// The pools of an rl section: rollout cards (those that ran
// generate_sequences), training cards (the rest when separate; all when
// colocated), and the share of each pool's card-time it spent idle.
struct RlPools {
  int rollout_cards = 0, train_cards = 0;
  double rollout_waiting = 0, train_waiting = 0;  // 1 - busy card-time / (cards x Σ windows)
  int64_t rollout_ns = 0;  // mean generate_sequences span per iteration
  int64_t train_ns = 0;    // mean scoring + update spans per iteration
  double rollout_share = 0;  // mean generate_sequences share of the window
};
RlPools PoolsOf(const analysis::Rl& rl);

// The RL candidates for `rl` (analysis.rl(), present). `model`: the run's
// configuration (nullptr: evidence only, no prediction). `predict` false
// (advise --no-replay): no plan is built. Predicted ones carry
// step_before/after = MeanIterationNs before / after, gain, fixes =
// "rl.iterations[].time_ns.mean"; a candidate whose change is not a valid
// run, or whose search found nothing better, has `not_proposed` set.
std::vector<Proposal> RlProposals(const analysis::Rl& rl, const tracegen::RunConfig* model, bool predict,
                                  int threads);

}  // namespace moetrace::advise
