// Verification of an estimate by tracegen's full simulation: pass 1 over
// every rank gives the exact step time (Engine::RankEndTimes); pass 2 of
// one rank per pipeline stage (DP 0, TP 0) gives peak memory, exposed EP
// communication and bubble from tracegen's ground-truth breakdown.
#pragma once

#include "analyzer/search/estimate.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::search {

// `config` validated, steps = 1; pass 1 on `threads` threads (0: one per core).
Figures Simulate(const tracegen::RunConfig& config, int threads = 0);

}  // namespace moetrace::search
