// Display names of ranks and tracks, shared by the Perfetto and Chrome JSON
// exporters so both show the same labels.
#pragma once

#include <cstdint>
#include <string>

#include "formats/trace.h"

namespace moetrace {

// The pid a rank's process gets in exported traces. Not the rank id itself:
// trace processors reserve pid 0 for the kernel's idle (swapper) process,
// which would swallow rank 0.
inline int32_t ExportPid(int32_t rank) { return rank + 1; }

// "rank 3 (node0)", or "rank 3" when the host is unknown.
std::string ProcessLabel(const Rank& rank);

// Host threads keep their name; device streams read like
// "NPU stream 3 (compute)" (GPU when the rank's tracks say CUDA/GPU), with the
// source's own name appended when it says more than "stream N"; counters keep
// their name.
std::string TrackLabel(const Rank& rank, size_t track_index);

// The stream / thread id shown for a track: its native id, or its index when
// the source had none.
int64_t TrackDisplayId(const Rank& rank, size_t track_index);

}  // namespace moetrace
