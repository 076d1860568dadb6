// moetrace generate for an RL config (config.rl().algorithm() non-empty):
// the plan built once, its cards emitted on worker threads through the same
// ordered sink path as pre-training (rank_stream.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "formats/trace_io.h"
#include "tracegen/generate.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl {

// The metadata attributes analyze reads what the ranges cannot show from
// (rl.instance_cards, rl.trained_tokens.<i>, rl.staleness.<i>): written by
// GeneratePlan, and by advise's predictions, which analyse a plan unemitted.
std::vector<std::pair<std::string, std::string>> AnalyzerAttributes(const Plan& plan);

// BuildPlan(config, threads), then GeneratePlan. Called by Generate.
GenerateSummary GenerateRl(const RunConfig& config, const std::vector<int32_t>& cards,
                           TraceSink& sink, const std::function<void(int, int)>& progress = {},
                           int threads = 0);

// The cards of `plan` (`cards` empty: every card) into `sink`, then the
// metadata: source "tracegen", the full config, layout.world_size = every
// card, ground truth = plan.labels (job level, rank -1; no per-card labels:
// the pre-training figures per step do not describe an RL card). The bytes
// are the same for any thread count. A card outside the plan is an
// InputError naming --ranks.
GenerateSummary GeneratePlan(const Plan& plan, const std::vector<int32_t>& cards, TraceSink& sink,
                             const std::function<void(int, int)>& progress = {}, int threads = 0);

}  // namespace moetrace::tracegen::rl
