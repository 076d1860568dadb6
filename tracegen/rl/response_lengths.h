// Response lengths of an iteration's sequences, and the rollout's long-tail
// idle time they cause.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen::rl {

// `count` lengths for iteration `iteration`: fixed (every one response_mean)
// or lognormal with mean response_mean and shape response_sigma (log-space
// mu = ln(mean) - sigma^2 / 2), rounded, at least 1, capped at response_max.
// Deterministic: keyed by (seed, iteration), the same on every platform.
std::vector<int64_t> DrawResponseLengths(const RlConfig& rl, uint64_t seed, int iteration,
                                         int64_t count);

// Long-tail idle card-time of a rollout whose instances (of
// `cards_per_instance` cards each) finish at `finish`: every card waits from
// its own instance's end to the last instance's end,
//   sum_i cards_per_instance * (max_j finish_j - finish_i).
TimeNs LongTailIdle(const std::vector<TimeNs>& finish, int cards_per_instance);

}  // namespace moetrace::tracegen::rl
