// Expert placement (EDPB-style dynamic migration) on a recorded trace: from
// the routing records (tokens per expert, per rank, step, micro-batch and
// layer), each step's placement becomes the greedy balanced packing
// (advise::PlanLayer) of the previous step's measured loads -- what the
// migration would use; step 0 keeps the recorded placement. Then per EP
// member and layer instance:
//   - grouped GEMM (and the experts' vector ops) cost overhead + the rest x
//     g(received tokens after) / g(before), g(x) = x + half * local experts
//     (the calibration's tile under-use; half 0 when unknown);
//   - the layer's EP all-to-alls (forward, backward, recompute) move their
//     transfer by the flat cost ratio of the new and old token matrices.
// The migration's own weight transfer is not added (noted).
#pragma once

#include "analyzer/replay/event_edits.h"
#include "analyzer/replay/transforms/calibration.h"
#include "formats/trace.h"

namespace moetrace::replay {

// Returns the number of layer instances (step, micro-batch, layer, EP group) re-balanced.
int64_t RebalanceExperts(const Trace& trace, const Calibration& cal, EventEdits* edits);

}  // namespace moetrace::replay
