// One rollout instance's generation, as a continuous-batching inference
// engine runs it (vLLM / MindIE style): up to max_batch sequences in flight,
// fewer when their KV cache would not fit; sequences admitted together are
// prefilled in one chunk, then every decode step produces one token for each
// sequence in flight; a finished sequence frees its slot and its cache, and
// the next waiting sequence is admitted before the following step.
#pragma once

#include <cstdint>
#include <vector>

#include "tracegen/rl/inference_cost.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl {

struct RolloutSequence {
  int64_t prompt = 0;    // tokens
  int64_t response = 0;  // tokens to generate (>= 1)
};

// A sequence is admitted only when the instance's KV capacity can hold it at
// `reserve_tokens` (prompt + the response cap: the engine cannot know the
// length in advance, so nothing is ever preempted). Throws std::logic_error
// if one sequence alone does not fit (ValidateRl rejects such configs).
InstanceIteration SimulateRollout(const InferenceCost& cost, int max_batch,
                                  const std::vector<RolloutSequence>& seqs,
                                  int64_t response_cap, TimeNs start, int iteration);

}  // namespace moetrace::tracegen::rl
