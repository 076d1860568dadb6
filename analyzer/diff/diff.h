// `moetrace diff A B`: two analyses side by side (analyzer/diff/README.md).
// Every time is brought to ns per rank and step before it is compared, so
// that a run of other length or size compares; each time delta is also
// given as its share of the step-time change, and the lists are sorted by
// what explains the difference, largest first.
#pragma once

#include <string>

#include "analyzer/proto/analysis.pb.h"
#include "analyzer/proto/diff.pb.h"

namespace moetrace {

// `name_a` / `name_b` are the inputs as the user gave them (Diff.a, Diff.b).
analysis::Diff BuildDiff(const analysis::Analysis& a, const analysis::Analysis& b,
                         const std::string& name_a, const std::string& name_b);

// Rank-steps of an analysis: the summed step count of its ranks (a rank
// without steps counts one), else cluster.rank_count x cluster.steps; at
// least 1. Cluster sums divided by it are per rank and step.
double RankSteps(const analysis::Analysis& a);

}  // namespace moetrace
