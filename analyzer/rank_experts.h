// Expert load imbalance of the tokens one rank routed (its own routing
// records): per step, MaxVio over experts and over EP ranks of the loads of
// each layer (micro-batches summed), averaged over layers; for the rank,
// averaged over steps. The cluster figure (cluster.cc) sums all ranks first.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "formats/trace.h"

namespace moetrace {

struct ExpertVio {
  int32_t step = kNone;  // kNone: the rank's mean over steps
  double max_vio = 0, ep_max_vio = 0;
};

// Fills `steps` (ascending step, only steps with routing records) and, when
// there is any, `*total`. Returns false when the rank has no routing records.
bool RankExpertImbalance(const Rank& rank, std::vector<ExpertVio>* steps, ExpertVio* total);

// max / mean - 1 (DeepSeek's MaxVio); 0 for empty or all-zero loads.
double MaxVio(const double* loads, size_t n);

// Tokens received by redundant expert copies (RoutingRecord::copy_*),
// summed per (expert, EP rank) over records.
struct CopyLoads {
  std::vector<int32_t> expert, ep_rank;
  std::vector<int64_t> tokens;
  std::unordered_map<uint64_t, size_t> index;  // (expert, EP rank) -> position
  void Add(int32_t expert, int32_t ep_rank, int64_t tokens);
  void Add(const RoutingRecord& r);
};

// EP-rank loads of one layer: each expert's tokens on its rank (`placement`,
// else contiguous blocks), less what its copies received, which lands on
// the copies' ranks.
std::vector<double> EpLoads(const std::vector<double>& tokens, const std::vector<int32_t>& placement,
                            int32_t ep, const CopyLoads& copies);

}  // namespace moetrace
