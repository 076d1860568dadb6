// EDPB's VPP layer split: how many consecutive layers each model stage
// (virtual pipeline stage) runs, chosen from the layers' estimated costs
// instead of an even count, so that pipeline ranks holding dense, MoE and
// MTP layers, the embedding or the LM heads carry about the same work.
// EDPB's split (engine_edpb.cc) starts from it and keeps the split whose
// pipeline ends first (split_schedule.h): equal work per rank does not
// set the step when routing is skewed.
#pragma once

#include <array>
#include <vector>

namespace moetrace::tracegen {

// Layers per model stage (each >= 1 but the last, which may have none when
// last_extra > 0; in order, summing to layer_cost.size())
// for `slices` model stages, where slice s runs on pipeline rank s % pp (the
// interleaved placement; pp == slices without VPP). first_extra is the work
// only slice 0 has (embedding), last_extra the work only the last slice has
// (LM head, MTP modules). The split minimises, in order: the most loaded
// rank's work (sum of its slices: it bounds the pipeline's steady state),
// the most loaded slice's (a slow slice holds up the next rank), then the
// spread (sum of squares) of both. Found by local search from the even
// split, moving one layer at a time from a slice to another while the order
// improves (32 slices, 61 layers: about 30 rounds of 1,000 moves).
// With `baseline` (a split of the same slices, e.g. MindSpeed's noop-layer
// padding, which the split replaces), the search also starts from it and the
// better of the two ends is returned: never a split that is worse than the
// baseline under these costs (the baseline itself when nothing beats it).
std::vector<int> BalancedSplit(const std::vector<double>& layer_cost, double first_extra,
                               double last_extra, int slices, int pp,
                               const std::vector<int>& baseline = {});

// The split's objective, as BalancedSplit orders it: {most loaded rank's
// work, most loaded slice's, sum of squares of the ranks', of the slices'}.
std::array<double, 4> SplitScore(const std::vector<double>& layer_cost, double first_extra,
                                 double last_extra, const std::vector<int>& counts, int pp);

}  // namespace moetrace::tracegen
