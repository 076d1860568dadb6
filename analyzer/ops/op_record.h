// One device op as the per-rank sweep (analyzer/rank_metrics.cc) saw it,
// for the operator view: written by index in pass 1, 32 bytes, no string.
// The view (rank_ops.h) folds these by interned name after the sweep, so the
// sweep itself pays one store per op.
#pragma once

#include <cstdint>

#include "formats/trace.h"

namespace moetrace::ops {

// What kind of device op: the communication classes first (index =
// CommClass), then compute and copy. Compute ops are classed by name later,
// once per interned name (op_view_class.h).
inline constexpr uint8_t kGroupCompute = kCommClassCount;
inline constexpr uint8_t kGroupCopy = kCommClassCount + 1;

struct OpRecord {
  StringId name;
  StringId shape;   // 0 = the trace records none
  TimeNs dur;       // device time (negative durations count as 0)
  TimeNs host;      // summed duration of its launch events; -1 = no launch joined
  uint8_t group;    // CommClass, kGroupCompute or kGroupCopy
};

// Host-bound time attributed to the op whose late launch ended the wait.
struct WaitShare {
  StringId name;
  int64_t ns;
};

}  // namespace moetrace::ops
