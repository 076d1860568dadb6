// Job-level ground truth of an RL plan (rank -1, step = iteration), with
// the definitions of analyzer/proto/analysis.proto RlIteration.
#pragma once

#include <vector>

#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl {

// Keys below rl.iterations[i]: time_ns, start_ns, phases.<task>.time_ns,
// phases.<task>.card_ns, busy_card_ns, long_tail_idle_card_ns, switch_ns,
// generated_tokens, trained_tokens, staleness. Reads plan.card,
// plan.generated_tokens, plan.trained_tokens, plan.staleness.
std::vector<LabeledValue> PlanLabels(const Plan& plan);

}  // namespace moetrace::tracegen::rl
