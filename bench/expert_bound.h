// The EP-rank load EDPB's expert migration cannot place away. Experts move
// whole and every EP rank holds the same number of them, so the rank holding
// the hottest expert carries at least that expert plus the coldest others;
// when that sum is above the mean rank load, no placement balances the layer
// (bench/README.md, "skewlag"). Loads are relative to the mean EP-rank load
// (1 = balanced).
#pragma once

#include <cstdint>
#include <vector>

#include "tracegen/routing.h"

namespace moetrace::bench {

// Each EP position's load under `placement` (expert -> position), over the
// mean position's. Experts placed outside [0, group) are not counted.
std::vector<double> RelativeRankLoads(const std::vector<double>& popularity,
                                      const std::vector<int32_t>& placement, int group);

// A lower bound on the maximum any placement of whole experts,
// floor(experts / group) per position, can reach: max(1, (hottest + the
// experts/group - 1 coldest) x group / total). Not always reached: the
// other positions may not balance below it.
double WholeExpertBound(const std::vector<double>& popularity, int group);

// The most loaded EP position's load over the mean with redundant copies:
// each expert's load split equally over its holders (the original at
// `placement`, its copies at theirs), as the engine splits its tokens.
double MaxLoadWithCopies(const std::vector<double>& popularity, const std::vector<int32_t>& placement,
                         const tracegen::ExpertCopies& copies, int group);

}  // namespace moetrace::bench
