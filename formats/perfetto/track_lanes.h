// Splits the events of one model track into lanes that nest properly.
//
// Perfetto forms slices from BEGIN/END pairs on a track, so slices on one
// track must nest like a call stack. Sources do not promise that (async
// collectives on one stream, overlapping annotations): events that overlap
// without nesting go to extra lanes, exported as child tracks. Assignment is
// deterministic: events in (start, longest first, index) order, each into the
// lowest lane where it nests (or that is idle at its start).
#pragma once

#include <cstdint>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

// Zero-length (or negative) and kFlagInstant events are instants: they never
// open a slice, and always go to lane 0.
inline bool IsInstantEvent(const EventTable& ev, size_t i) {
  return ev.dur[i] <= 0 || (ev.flags[i] & kFlagInstant) != 0;
}

struct TrackLanes {
  uint32_t lane_count = 0;
  // Event indices grouped by lane (lane 0 first), each lane in time order;
  // lane L is order[lane_begin[L], lane_begin[L + 1]).
  std::vector<uint32_t> order;
  std::vector<uint32_t> lane_begin;
};

// Fills `out` (buffers are reused across calls).
void AssignLanes(const EventTable& events, TrackLanes* out);

}  // namespace moetrace
