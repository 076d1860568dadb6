// The cross-rank rules of METRICS.md "Cross-rank", shared by the trace
// analysis (cluster.cc) and msprof-analyze's cluster output
// (cluster_output.cc): the spread of a per-rank figure and the slow-rank rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

// min / median / max of `values` (the median of an even count is the mean
// of the two middle values), rounded to ns; returns the median, 0 when empty
// (then `out` is left alone).
double FillMinMedianMax(std::vector<double> values, analysis::StepTime* out);

// Per rank, one value per metric (the same order as `metrics`).
struct RankValues {
  int32_t rank;
  std::vector<double> values;
};

// Ranks whose value differs from the mean over ranks by more than 5% of the
// mean (Ascend advisor's rule), for each metric with a positive mean; at
// least 2 ranks. A NaN value is a figure the rank lacks: left out of the
// mean and never flagged. Largest |deviation| first, then rank, then
// metric; at most 100.
void FlagSlowRanks(const std::vector<std::string>& metrics, const std::vector<RankValues>& ranks,
                   google::protobuf::RepeatedPtrField<analysis::SlowRank>* out);

}  // namespace moetrace
