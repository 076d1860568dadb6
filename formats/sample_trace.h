// A small synthetic trace with every field of the model populated: used by
// round-trip tests of every codec and to regenerate sample-traces/.
#pragma once

#include "formats/trace.h"

namespace moetrace {

// `ranks` ranks, each with a host thread, a dispatch thread, compute / comm /
// copy streams and memory counters; `events_per_stream` device ops per
// stream; deterministic for a given seed.
Trace MakeSampleTrace(int ranks = 4, int events_per_stream = 64, uint64_t seed = 1);

}  // namespace moetrace
