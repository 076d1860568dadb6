#include "analyzer/rl/rl_task.h"

#include <array>
#include <string>

namespace moetrace::rl {
namespace {

constexpr std::array<std::string_view, kTaskCount> kTaskNames = {
    "generate_sequences", "compute_log_prob", "compute_ref_log_prob", "compute_rm_score",
    "compute_values",     "update_actor",     "update_critic",        "reshard_to_train",
    "reshard_to_infer",   "sync_weights"};
constexpr std::array<std::string_view, kRoleCount> kRoleNames = {"rollout", "actor", "ref",
                                                                 "reward", "critic"};

bool Has(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

template <typename... P>
bool Any(std::string_view s, P... parts) {
  return (Has(s, parts) || ...);
}

// The task, from the most specific spelling to the least: "ref_compute_log_prob"
// holds "compute_log_prob", so the reference is tried first; "offload" and
// "onload" name no task but say which way the switch goes.
std::optional<Recognised> TaskOf(std::string_view s) {
  auto is = [](Task t, bool unknown = false, bool bare = false) {
    return std::optional<Recognised>(Recognised{t, DefaultRole(t), unknown, bare});
  };
  if (Any(s, "ref_log_prob", "ref_compute_log_prob", "compute_ref_log_prob") ||
      ((Has(s, "reference") || s.starts_with("ref/") || s.starts_with("ref.")) &&
       Has(s, "log_prob"))) {
    return is(Task::kComputeRefLogProb);
  }
  if (Any(s, "rm_score", "compute_reward", "reward_compute") ||
      (Has(s, "reward") && Has(s, "score"))) {
    return is(Task::kComputeRmScore);
  }
  if (Has(s, "compute_value")) return is(Task::kComputeValues);
  if (Any(s, "update_critic", "critic_update")) return is(Task::kUpdateCritic);
  if (Any(s, "compute_log_prob", "old_log_prob")) return is(Task::kComputeLogProb);
  if (Any(s, "generate_sequence", "rollout_generate")) return is(Task::kGenerateSequences);
  if (Any(s, "update_actor", "actor_update", "update_policy")) return is(Task::kUpdateActor);
  if (Any(s, "reshard_to_train", "to_train_mode")) return is(Task::kReshardToTrain);
  if (Any(s, "reshard_to_infer", "to_infer_mode")) return is(Task::kReshardToInfer);
  if (Any(s, "sync_weight", "weight_sync", "weights_sync")) return is(Task::kSyncWeights);
  // Optimizer states come back before training and leave before inference.
  if (Has(s, "onload")) return is(Task::kReshardToTrain, false, true);
  if (Has(s, "offload")) return is(Task::kReshardToInfer, false, true);
  if (Has(s, "reshard")) return is(Task::kReshardToTrain, true, true);
  return std::nullopt;
}

}  // namespace

std::string_view TaskName(Task t) { return kTaskNames[static_cast<size_t>(t)]; }
std::string_view RoleName(Role r) { return kRoleNames[static_cast<size_t>(r)]; }

Role DefaultRole(Task t) {
  switch (t) {
    case Task::kGenerateSequences: return Role::kRollout;
    case Task::kComputeRefLogProb: return Role::kRef;
    case Task::kComputeRmScore: return Role::kReward;
    case Task::kComputeValues:
    case Task::kUpdateCritic: return Role::kCritic;
    default: return Role::kActor;
  }
}

bool IsSwitch(Task t) {
  return t == Task::kReshardToTrain || t == Task::kReshardToInfer || t == Task::kSyncWeights;
}

std::optional<Recognised> Recognise(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::optional<Recognised> r = TaskOf(lower);
  if (!r) return r;
  // "<role>/<task>" (tracegen, verl's MSTX ranges): the role as written,
  // when it is one of ours ("actor_rollout_ref/..." names three: the task decides).
  const size_t slash = lower.find('/');
  if (slash != std::string::npos) {
    const std::string_view prefix = std::string_view(lower).substr(0, slash);
    for (int i = 0; i < kRoleCount; ++i) {
      if (prefix == kRoleNames[i]) {
        r->role = static_cast<Role>(i);
        r->bare = false;  // "actor/offload": an RL worker's own range
      }
    }
  }
  return r;
}

}  // namespace moetrace::rl
