// The verl / MindSpeed-RL names of the phases (tracegen/rl/README.md).
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl {

std::string_view TaskName(Task t) {
  switch (t) {
    case Task::kGenerateSequences: return "generate_sequences";
    case Task::kComputeLogProb: return "compute_log_prob";
    case Task::kComputeRefLogProb: return "compute_ref_log_prob";
    case Task::kComputeRmScore: return "compute_rm_score";
    case Task::kComputeValues: return "compute_values";
    case Task::kUpdateActor: return "update_actor";
    case Task::kUpdateCritic: return "update_critic";
    case Task::kReshardToTrain: return "reshard_to_train";
    case Task::kReshardToInfer: return "reshard_to_infer";
    case Task::kSyncWeights: return "sync_weights";
  }
  return "unknown";
}

std::string_view RoleName(Task t) {
  switch (t) {
    case Task::kGenerateSequences: return "rollout";
    case Task::kComputeRefLogProb: return "ref";
    case Task::kComputeRmScore: return "reward";
    case Task::kComputeValues:
    case Task::kUpdateCritic: return "critic";
    default: return "actor";
  }
}

}  // namespace moetrace::tracegen::rl
