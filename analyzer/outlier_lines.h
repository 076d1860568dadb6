// Terminal lines for slow ranks (cluster.slow_ranks, cluster_output.slow_ranks):
// only deviations worth at least 1% of the step, ranks of one metric with
// close deviations on one line (a pipeline stage reads as one line),
// largest time away from the mean first, at most 10 lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

// The terminal's rule for which outliers are worth showing, shared with the
// reports (reports/findings.cc) so that both list the same ranks: a rank
// past the 5% rule (METRICS.md) whose time away from the mean is at least
// 1% of the step (`step_ns`, the median step time). A 70% swing of a 0.04 ms
// free time is in the JSON, not in front of a person.
bool IsNotableOutlier(const analysis::SlowRank& r, double step_ns);

// Outlier ranks of one metric whose deviations lie close together (no gap
// over 5 points between neighbours; typically the ranks of one pipeline
// stage) are one group, largest time away from the mean first.
struct OutlierGroup {
  std::string metric;
  std::vector<int32_t> ranks;  // sorted
  double value = 0, mean = 0, min_dev = 0, max_dev = 0;  // value: the ranks' mean
};
std::vector<OutlierGroup> GroupOutliers(std::vector<const analysis::SlowRank*> rows);
// "rank 3", "ranks 0-7,12" (long lists end with the count).
std::string OutlierRanks(const OutlierGroup& g);
// "+12.0 %", "-49.6..-38.3 %".
std::string OutlierDeviation(const OutlierGroup& g);

// "" when `rows` is empty. `indent` prefixes every line; `json_path` names
// where the rows not shown are.
std::string FormatOutlierRanks(const google::protobuf::RepeatedPtrField<analysis::SlowRank>& rows,
                               double step_ns, std::string_view indent, std::string_view json_path);

}  // namespace moetrace
