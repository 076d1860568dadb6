// Host-bound time (METRICS.md "Host-Bound": |H \ busy| in the step windows)
// split among the ops whose late launch ended each wait, so that a
// host-bound trace names the operator types it waited for.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/ops/op_record.h"
#include "analyzer/rank_metrics.h"

namespace moetrace::ops {

// `waits`: the host waits in start order (Item::name = the op b that ended
// each); `busy`: the union of busy device time, sorted disjoint pieces;
// `bounds` (W + 1) and `step_ids` (W): the windows, those with a negative
// id counted nowhere. Where waits overlap, a point goes to the wait that
// started first (the earliest-issued op the device was waiting for). The
// shares sum to the rank's host_bound_ns exactly. `by_name` is scratch
// (indexed by name id, left zeroed); `out` gets one entry per name, in
// name-id order.
void AttributeHostBound(const RankScratch::Item* waits, size_t n,
                        const std::pair<TimeNs, TimeNs>* busy, size_t n_busy,
                        const TimeNs* bounds, const int32_t* step_ids, size_t W,
                        std::vector<int64_t>* by_name, std::vector<WaitShare>* out);

}  // namespace moetrace::ops
