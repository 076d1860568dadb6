// Fine-grained overlap of two pipeline tasks (Adaptive Pipe, DualPipe): the
// issue order of two operator chains so that one chain's expert all-to-all
// is in flight while the other computes.
#pragma once

#include <cstdint>
#include <vector>

namespace moetrace::tracegen {

struct OverlapOp {
  uint8_t chain = 0;      // 0 or 1
  bool boundary = false;  // an expert all-to-all: ends a segment of its chain
};

// Cuts each chain into segments, a segment ending at a boundary op, and
// issues the segments alternately, `first` chain first, the rest of the
// longer chain at the end. The order depends only on the op kinds, never on
// durations, so every member of a group issues its collectives alike.
// Returns op indices in issue order; each chain keeps its own order.
std::vector<int32_t> AlternateSegments(const std::vector<OverlapOp>& ops, int first);

}  // namespace moetrace::tracegen
