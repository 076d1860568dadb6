// The terminal lines of `cluster_output` (msprof-analyze's cluster folder):
// per-rank breakdown (all ranks when few, else the slowest and percentiles),
// slowest rank, slow ranks, stages, slowest links, trace vs profiler. Says
// which figures are the profiler's and which are moetrace's.
#pragma once

#include <string>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

// "" when the analysis has no cluster_output.
std::string FormatClusterOutput(const analysis::Analysis& a);

}  // namespace moetrace
