// RankOps -> analysis.proto Operators (ranks[i].operators): the classes,
// the first kRankTopRows operators and kRankDispatchRows dispatch rows,
// with names and shapes as strings.
#pragma once

#include "analyzer/ops/rank_ops.h"
#include "analyzer/proto/analysis.pb.h"

namespace moetrace::ops {

// Class rows in ViewClass order, absent classes omitted; shares of device
// time over every class, of compute over the compute classes.
void FillClasses(const int64_t count[kViewClassCount], const int64_t total[kViewClassCount],
                 int32_t steps, analysis::Operators* out);
void FillOperators(const RankOps& ops, const StringTable& strings, analysis::Operators* out);

}  // namespace moetrace::ops
