// The `rl` section of a RunConfig: defaults and validation. Kept apart from
// config.cc so that a RunConfig without `rl` goes through exactly the code
// it went through before (the empty section is never created).
#pragma once

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen::rl {

// True when the config asks for RL post-training (rl.algorithm non-empty).
bool HasRl(const RunConfig& config);
// Fills every rl.* key left unset with its default; no-op without RL (the
// section is not created).
void ApplyRlDefaults(RunConfig* config);
// Rejects impossible RL settings with an InputError naming the key; no-op
// without RL. Expects the rest of the config validated and defaulted.
void ValidateRl(const RunConfig& config);

// Bounds on what a plan holds (ValidateRlSize): rollout steps times the
// cards that emit them (estimated as kMaxRolloutSteps is; ~100 bytes each
// in the file), and response lengths drawn (8 bytes each).
inline constexpr int64_t kMaxRolloutStepCards = 1'000'000'000;
inline constexpr int64_t kMaxResponseLengths = 100'000'000;
// The size part of ValidateRl: estimated rollout steps (also bounded by
// kMaxRolloutSteps), card-steps and response lengths, an InputError naming
// the keys past a bound. `fit_per_group`: full-length sequences one
// attention-DP group's KV cache holds.
void ValidateRlSize(const RunConfig& config, int64_t fit_per_group);

// Cards of the rollout pool: every card when colocated, rl.rollout.cards
// when separate.
int RolloutPoolCards(const RunConfig& config);
// Every card of the run: the training layout plus, when separate, the pool.
int TotalCards(const RunConfig& config);
// Sequences (responses) per iteration: prompts x samples.
int64_t SequencesPerIteration(const RunConfig& config);

}  // namespace moetrace::tracegen::rl
