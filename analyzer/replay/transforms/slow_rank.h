// Slow-rank what-if: rank R runs at the speed of its peers. Peers are the
// ranks whose device streams carry the same compute ops in the same order
// (same pipeline stage); each compute op of R takes the median duration of
// the same op on its peers. Without peers, R's compute scales by the
// ratio of the median peer-free rank compute total to its own.
#pragma once

#include <cstdint>

#include "analyzer/replay/event_edits.h"
#include "formats/trace.h"

namespace moetrace::replay {

// Returns the number of ops re-timed; throws InputError when rank R is absent.
int64_t MatchPeers(const Trace& trace, int32_t rank, EventEdits* edits);

}  // namespace moetrace::replay
