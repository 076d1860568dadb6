// The operator view's lines of the terminal summary (analyzer/summary.cc):
// the largest classes, the top 5 operators, and, when the trace is
// host-bound, the dispatched operator type whose late launches cost most.
#pragma once

#include <string>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace::ops {

std::string FormatOpsSummary(const analysis::Analysis& a);

// "name [shape]"; traces write shapes bracketed ("[[8, 4096], [128]]"), and
// those get no second pair. No shape: the name.
std::string OpLabel(const std::string& name, const std::string* shape);

}  // namespace moetrace::ops
