// schedule.kind=K as a graph transform: each rank's recorded ops re-issued
// in the order schedule K gives its pipeline stage (tracegen/schedule.h),
// the graph replay then re-times them (collective rendezvous, send ->
// receive, stream order).
//
// Only changes that keep the layer -> stage split (same pp, vpp and
// micro-batches) are modelled: 1f1b <-> interleaved (the same order at the
// same vpp), interleaved/1f1b <-> adaptive (fused forward & backward: the
// two tasks' ops interleaved in segments ending at the expert all-to-alls,
// tracegen/overlap.h, the backward's collectives on a second communication
// stream). A change that needs another vpp, or dualpipe, is an InputError.
#pragma once

#include <string_view>

#include "analyzer/replay/graph_replay.h"
#include "formats/trace.h"

namespace moetrace::replay {

// The order schedule `kind` gives; needs the run's configuration
// (metadata.config_json) and no swap copies. Returns a note on what changed.
std::string ChangeSchedule(const Trace& trace, std::string_view kind, GraphModifications* mods);

// Refuses a vpp other than the trace's (the layer split would change).
void CheckVpp(const Trace& trace, int vpp);

}  // namespace moetrace::replay
