// The tracks of a generated rank, as a torch_npu process records them: the
// Python and dequeue threads, six device streams, the memory counters. The
// pre-training engine and the RL emitter (which adds its own counters
// after these) lay ranks out alike, so an RL card's actor update is the
// engine's rank track for track.
#pragma once

#include "formats/trace.h"

namespace moetrace::tracegen {

// Appends the tracks to k (k.rank set), in the order the engine's stream
// and counter indices assume.
void AddRankTracks(Rank& k);

}  // namespace moetrace::tracegen
