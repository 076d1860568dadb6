// The pipeline's makespan for a layer split under the run's schedule:
// EDPB's stage split (engine_edpb.cc) picks the split by it, because under
// the skewed routing of the seed table's EDPB row the most loaded rank's
// work (BalancedSplit's objective) does not set the step — the pipeline's
// waits do (bench/README.md, "EDPB's stage split").
#pragma once

#include <vector>

#include "tracegen/schedule.h"

namespace moetrace::tracegen {

// Per-layer forward and backward cost, and the work only the first slice
// (embedding) and the last (LM head, the MTP modules' heads and losses)
// have, each way; the MTP modules' layers (with their input projection)
// run on slice mtp_stage (-1: the last; parallel.mtp_stage, mtp_stage.h).
struct SplitCosts {
  std::vector<double> fwd, bwd;
  double first_fwd = 0, first_bwd = 0, last_fwd = 0, last_bwd = 0;
  double mtp_fwd = 0, mtp_bwd = 0;
  int mtp_stage = -1;
};

// When the last task of one step ends if every pipeline stage runs its
// StageSchedule items in order, each as soon as the stage is free and its
// inputs are there: a slice's forward of a micro-batch after the previous
// slice's, its backward after the next slice's backward (the last slice:
// after its own forward). A fused item (adaptive schedules) takes the sum
// of its two tasks (no overlap credited); p2p transfers are not counted.
// `counts` is layers per model stage. Returns a negative value if the
// schedule cannot finish (not for valid schedules).
double PipelineMakespan(const SplitCosts& costs, const std::vector<int>& counts,
                        const std::vector<std::vector<PipeItem>>& schedules, int pp);

// The split with the least makespan found by local search (one layer moved
// from a slice to another, the first move that lowers the makespan taken),
// started from each of `starts` (splits of the same slices; others are
// skipped); ties keep the earlier start's end. Slices keep >= 1 layer but
// the last, which may keep none when it has work of its own.
// With `mtp_stages` (slices the MTP layers may run on, mtp_stage.h), the
// search runs once per slice, earlier ones kept on a tie; with the MTP
// before the last slice, the slices after it hold no layer (each start's
// layers there move to the MTP's slice, which may then keep none) and
// *mtp_stage_out gets the slice chosen. Without, costs.mtp_stage is used.
std::vector<int> PipelineSplit(const SplitCosts& costs, const std::vector<std::vector<int>>& starts,
                               const std::vector<std::vector<PipeItem>>& schedules, int pp,
                               const std::vector<int>& mtp_stages = {}, int* mtp_stage_out = nullptr);

}  // namespace moetrace::tracegen
