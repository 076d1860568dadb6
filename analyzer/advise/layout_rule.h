// The layout rule of `advise` (issue #15 part 2): the parallel layout is the
// largest corrective setting there is, and tracegen traces carry theirs
// (metadata.config_json). The rule searches the layouts of the trace's own
// card count and global batch (analyzer/search: the estimator over the whole
// default space) and, when the configured layout is not the best estimate,
// proposes the change, its prediction verified by regenerating: tracegen's
// full simulation (search::Simulate) of the configured layout and of the
// best few estimates.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::advise {

// Layouts whose estimate is within this of the best estimate count as ties
// (e.g. swap on or off when nothing needs it): among them the one that
// changes the fewest knobs of the configured layout is verified first.
inline constexpr double kLayoutTie = 0.005;
// The configured layout's estimate must be this much slower than the best
// estimate before anything is simulated (advise drops a proposal that does
// not shorten its step by 1% anyway).
inline constexpr double kLayoutEvidence = 0.01;

// Rule "layout": std::nullopt when the configured layout is (within
// kLayoutEvidence of) the best estimate. `simulate` false (advise
// --no-replay): the proposal is the best estimate, not predicted. Otherwise
// it is predicted (step and peak before / after from the simulations,
// `fixes` = cluster.step_time_ns.max, the slowest rank's step) and
// `config` lists the RunConfig keys that change, `knob` the MindSpeed
// arguments of the new layout. Whether it is kept is advise's common rule
// (DropReason). A configuration the search cannot take (InputError) gives a
// proposal with `not_proposed` saying why (advise lists it as not proposed).
// `threads`: the search's and the simulations' (0: one per core).
std::optional<Proposal> LayoutProposal(const tracegen::RunConfig& config, bool simulate, int threads = 0);

// What a recorded trace measured, for a model the user gave
// (recorded_model.h): the proposal is then model-based. Its step before is
// the recorded step, its step after the recorded step scaled by the
// simulated ratio (best / configured: the model is trusted for the ratio,
// not for the absolute time), and the detail shows the recorded step beside
// the model's prediction for the configured layout. Confidence 0.5 when the
// model predicts the recorded step within 25%, else 0.3.
struct RecordedStep {
  int64_t step_ns = 0;              // cluster.step_time_ns.max of the recorded trace
  std::vector<std::string> notes;   // CheckModelAgrees' softer disagreements
};
std::optional<Proposal> LayoutProposal(const tracegen::RunConfig& config, bool simulate, int threads,
                                       const RecordedStep& recorded);

}  // namespace moetrace::advise
