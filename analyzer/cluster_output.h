// msprof-analyze's cluster_analysis_output in the analysis: the profiler's
// per-rank step breakdown (ranks[i].ascend.step_trace) and, in
// `cluster_output`, its stages and links with what moetrace computes from
// them: the spread and slow ranks (rank_spread.h, the rules of the trace
// analysis), the slowest rank, bandwidth per group against the nominal link
// figure (link_nominal.h), the slowest links, and for ranks that also have
// a trace, the trace's figures next to the profiler's.
#pragma once

#include "analyzer/proto/analysis.pb.h"
#include "formats/ascend/cluster_output.h"

namespace moetrace {

// Call after the trace analysis (ranks with events are compared); ranks the
// analysis lacks are added with only their ascend.step_trace.
void AddClusterOutput(const ClusterOutputFiles& files, analysis::Analysis* analysis);

}  // namespace moetrace
