// Terminal lines for slow ranks (cluster.slow_ranks, cluster_output.slow_ranks):
// only deviations worth at least 1% of the step, ranks of one metric with
// close deviations on one line (a pipeline stage reads as one line),
// largest time away from the mean first, at most 10 lines.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

// "" when `rows` is empty. `indent` prefixes every line; `json_path` names
// where the rows not shown are.
std::string FormatOutlierRanks(const google::protobuf::RepeatedPtrField<analysis::SlowRank>& rows,
                               double step_ns, std::string_view indent, std::string_view json_path);

}  // namespace moetrace
