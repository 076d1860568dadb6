// What the per-rank sweep (analyzer/rank_metrics.cc) knows of a device op
// for the operator view: its group (the comm class, compute or copy), and
// the host-bound time shares. The per-op folding is op_fold.h.
#pragma once

#include <cstdint>

#include "formats/trace.h"

namespace moetrace::ops {

// What kind of device op: the communication classes first (index =
// CommClass), then compute and copy. Compute ops are classed by name later,
// once per interned name (op_view_class.h).
inline constexpr uint8_t kGroupCompute = kCommClassCount;
inline constexpr uint8_t kGroupCopy = kCommClassCount + 1;


// Host-bound time attributed to the op whose late launch ended the wait.
struct WaitShare {
  StringId name;
  int64_t ns;
};

}  // namespace moetrace::ops
