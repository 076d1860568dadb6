// A greedy expert migration plan on measured loads (what
// --enable-expert-placement would do): per MoE layer, experts sorted by
// load are packed onto the EP rank with the least load that still has a
// free slot (each rank keeps its number of experts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace.h"

namespace moetrace::advise {

struct ExpertMove {
  int32_t expert = 0;
  int32_t from_rank = 0;  // EP rank
  int32_t to_rank = 0;
  int64_t tokens = 0;
};

struct LayerPlan {
  int32_t layer = 0;
  int32_t ep_size = 0;
  double ep_max_vio_before = 0;  // max EP-rank load / mean - 1
  double ep_max_vio_after = 0;
  std::vector<int32_t> placement;  // expert -> EP rank after migration
  std::vector<ExpertMove> moves;
};

// Loads: tokens per expert summed over the routing records of all ranks,
// steps and micro-batches of each layer. `ep_size` and the current placement
// come from the records (contiguous blocks when they have none).
std::vector<LayerPlan> PlanExpertPlacement(const std::vector<const RoutingRecord*>& records);

// Greedy packing of one layer's loads; `current` may be empty (blocks).
LayerPlan PlanLayer(int32_t layer, const std::vector<int64_t>& loads, int32_t ep_size,
                    const std::vector<int32_t>& current);

}  // namespace moetrace::advise
