// OVERLAP_ANALYSIS -> the profiler's own figures (Metadata::reference).
#pragma once

#include <vector>

#include "formats/ascend_db/sqlite_db.h"
#include "formats/trace.h"

namespace moetrace {

// Segments of one device (`device` -1: every row) by type (0 Computing,
// 1 Communication, 2 Communication(Not Overlapped), 3 Free), under exactly
// the keys ScanOverlapAnalysis gives trace_view.json's "Overlap Analysis":
// overlap_analysis.<x>_us (sum of endNs - startNs, in µs) and
// overlap_analysis.<x>_segments for each type present, and
// overlap_analysis.span_us (first start to last end of all segments).
// Rows with NULL times or another type are counted in *skipped.
std::vector<LabeledValue> ReadOverlapAnalysis(const SqliteDb& db, int64_t device, int32_t rank,
                                              int64_t* skipped);

}  // namespace moetrace
