// The RL phase a marker or annotation name stands for: the verl /
// MindSpeed-RL task names (tracegen/rl/README.md) inside the spellings that
// recorded traces use ("actor_rollout_ref/generate_sequences",
// "rollout_generate", "ActorHybridWorkerBase.update_actor", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace moetrace::rl {

// Stable order: the JSON lists an iteration's phases by start, ties in this order.
enum class Task : uint8_t {
  kGenerateSequences,
  kComputeLogProb,
  kComputeRefLogProb,
  kComputeRmScore,
  kComputeValues,
  kUpdateActor,
  kUpdateCritic,
  kReshardToTrain,
  kReshardToInfer,
  kSyncWeights,
};
inline constexpr int kTaskCount = 10;

enum class Role : uint8_t { kRollout, kActor, kRef, kReward, kCritic };
inline constexpr int kRoleCount = 5;

std::string_view TaskName(Task t);  // "generate_sequences", ...
std::string_view RoleName(Role r);  // "rollout", "actor", "ref", "reward", "critic"
Role DefaultRole(Task t);           // tracegen's: generate_sequences -> rollout, ...
// The switch between the training and the inference layout (switch_ns).
bool IsSwitch(Task t);

struct Recognised {
  Task task;
  Role role;
  // A switch range that names no direction ("resharding"): the caller
  // decides reshard_to_train (after a rollout) or reshard_to_infer.
  bool direction_unknown = false;
  // Matched only by a bare "reshard" / "offload" / "onload" without an RL
  // role prefix: FSDP2 names its own ops so (FSDP::post_backward_reshard),
  // so such a range counts only on a card that ran a recognised RL task.
  bool bare = false;
};
// nullopt: not an RL phase name. Case-insensitive.
std::optional<Recognised> Recognise(std::string_view name);

}  // namespace moetrace::rl
