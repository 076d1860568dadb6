// Launch -> device-op flows of one rank, shared by the exporters.
//
// A host launch and its device op carry the same correlation; several host
// kLaunch events may share one (enqueue, then dequeue/launch). Following the
// launch-join semantics, the flow starts at the kLaunch event of the
// correlation that ends LAST (the moment the host finished issuing the op)
// and ends at the device op.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

// True for events that are device busy time: compute / collective / p2p /
// copy on a device stream.
bool IsDeviceOp(const Track& track, size_t index);

// A flow id unique across the ranks of one output: derived from the rank id
// and the correlation, never 0, and below 2^53 so JSON readers that parse
// numbers as doubles keep it exact.
uint64_t FlowId(int32_t rank, int64_t correlation);

struct LaunchFlows {
  // Per track (same indexing as Rank::tracks), per event: the id of the flow
  // the event starts / terminates, 0 for none. Empty vectors for tracks with
  // no flow endpoint.
  std::vector<std::vector<uint64_t>> start;
  std::vector<std::vector<uint64_t>> end;
  size_t count = 0;  // number of flows (correlated launch/device-op pairs)

  uint64_t StartOf(size_t track, size_t event) const {
    return start[track].empty() ? 0 : start[track][event];
  }
  uint64_t EndOf(size_t track, size_t event) const {
    return end[track].empty() ? 0 : end[track][event];
  }
};

// Joins launches and device ops of `rank` by correlation. When several device
// ops share a correlation (which the model forbids), only the earliest one in
// track order gets the flow.
LaunchFlows FindLaunchFlows(const Rank& rank);

}  // namespace moetrace
