// RankMetrics -> the analysis protobuf (JSON paths of METRICS.md).
#pragma once

#include "analyzer/proto/analysis.pb.h"
#include "analyzer/rank_metrics.h"

namespace moetrace {

void FillBreakdown(const BreakdownNs& b, analysis::Breakdown* out);
void FillRatios(const BreakdownNs& b, analysis::Ratios* out);
void FillCommByClass(const ClassNs cls[kCommClassCount], analysis::CommByClass* out);
// `capacity_bytes` 0 = unknown device memory.
void FillRank(const RankMetrics& m, uint64_t capacity_bytes, analysis::RankAnalysis* out);

}  // namespace moetrace
