// Redundant experts (DeepSeek EPLB): when one expert alone carries more
// tokens than an EP rank's fair share, no migration can balance its layer
// (the rank holding it stays over the mean whatever else moves); copies of
// it on other EP ranks, each taking an equal share of its tokens, can.
// The plan runs tracegen's own choice (tracegen::ReplicateExperts) on the
// measured loads, so a regenerated trace places the copies as planned.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/trace.h"

namespace moetrace::advise {

struct LayerCopies {
  int32_t layer = 0;
  double ep_max_vio_before = 0;    // as recorded (copies already there included)
  double ep_max_vio_migrated = 0;  // after the best greedy migration (PlanLayer)
  double ep_max_vio_after = 0;     // recorded placement + the planned copies
  std::vector<int32_t> expert, ep_rank;  // the copies: expert, EP rank holding it
};

struct ReplicationPlan {
  int32_t copies = 0;  // routing.redundant_experts: copies per MoE layer and EP group
  // Means over the layers.
  double ep_max_vio_before = 0, ep_max_vio_migrated = 0, ep_max_vio_after = 0;
  std::vector<LayerCopies> layers;
};

// Loads per layer summed over every record (steps, micro-batches, ranks).
// A plan when some layer has an expert heavier than its EP rank's fair
// share and migration alone leaves the mean EP MaxVio at `threshold` or
// above. Copies: the fewest, more than the records already have and at most
// one per EP rank, whose mean EP MaxVio is within 0.02 of the lowest any
// count reaches, when that lowers it by 0.05 at least. nullopt otherwise.
std::optional<ReplicationPlan> PlanReplication(const std::vector<const RoutingRecord*>& records,
                                               double threshold);

// "EP MaxVio 1.47 -> 0.21 with 4 copies (migration alone: 1.47)\n layer 1: ...".
std::string ReplicationText(const ReplicationPlan& plan);

}  // namespace moetrace::advise
