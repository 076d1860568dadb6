// The spellings of verl, MindSpeed-RL and tracegen recognised as RL tasks.
#include "analyzer/rl/rl_task.h"

#include <gtest/gtest.h>

#include <string>

namespace moetrace::rl {
namespace {

std::string Of(std::string_view name) {
  auto r = Recognise(name);
  if (!r) return "-";
  return std::string(RoleName(r->role)) + "/" + std::string(TaskName(r->task)) +
         (r->direction_unknown ? "?" : "");
}

TEST(RlTask, TracegenNamesAreRoleSlashTask) {
  EXPECT_EQ(Of("rollout/generate_sequences"), "rollout/generate_sequences");
  EXPECT_EQ(Of("actor/compute_log_prob"), "actor/compute_log_prob");
  EXPECT_EQ(Of("ref/compute_ref_log_prob"), "ref/compute_ref_log_prob");
  EXPECT_EQ(Of("reward/compute_rm_score"), "reward/compute_rm_score");
  EXPECT_EQ(Of("critic/compute_values"), "critic/compute_values");
  EXPECT_EQ(Of("actor/update_actor"), "actor/update_actor");
  EXPECT_EQ(Of("critic/update_critic"), "critic/update_critic");
  EXPECT_EQ(Of("actor/reshard_to_train"), "actor/reshard_to_train");
  EXPECT_EQ(Of("actor/reshard_to_infer"), "actor/reshard_to_infer");
  EXPECT_EQ(Of("actor/sync_weights"), "actor/sync_weights");
}

// verl's worker methods and DistProfiler roles (Kineto user_annotation),
// MindSpeed-RL's mstx ranges (a method's __qualname__).
TEST(RlTask, RecordedSpellings) {
  EXPECT_EQ(Of("actor_rollout_ref/generate_sequences"), "rollout/generate_sequences");
  EXPECT_EQ(Of("actor_rollout_ref/compute_log_prob"), "actor/compute_log_prob");
  EXPECT_EQ(Of("actor_rollout_ref/compute_ref_log_prob"), "ref/compute_ref_log_prob");
  EXPECT_EQ(Of("rollout_generate"), "rollout/generate_sequences");
  EXPECT_EQ(Of("actor_compute_log_prob"), "actor/compute_log_prob");
  EXPECT_EQ(Of("ref_compute_log_prob"), "ref/compute_ref_log_prob");
  EXPECT_EQ(Of("actor_update"), "actor/update_actor");
  EXPECT_EQ(Of("critic_update"), "critic/update_critic");
  EXPECT_EQ(Of("update_policy"), "actor/update_actor");
  EXPECT_EQ(Of("Reference.compute_log_prob"), "ref/compute_ref_log_prob");
  EXPECT_EQ(Of("ActorRolloutHybrid.generate_sequences"), "rollout/generate_sequences");
  EXPECT_EQ(Of("Reward.compute_rm_score"), "reward/compute_rm_score");
  EXPECT_EQ(Of("MegatronShardingManager.reshard_to_train_mode"), "actor/reshard_to_train");
  EXPECT_EQ(Of("MegatronShardingManager.reshard_to_infer_mode"), "actor/reshard_to_infer");
  EXPECT_EQ(Of("GENERATE_SEQUENCES"), "rollout/generate_sequences");
}

TEST(RlTask, SwitchSpellingsAndOthers) {
  EXPECT_EQ(Of("onload_optimizer"), "actor/reshard_to_train");
  EXPECT_EQ(Of("offload_fsdp_optimizer"), "actor/reshard_to_infer");
  EXPECT_EQ(Of("resharding"), "actor/reshard_to_train?");
  EXPECT_EQ(Of("ProfilerStep#3"), "-");
  EXPECT_EQ(Of("aten::mm"), "-");
  EXPECT_EQ(Of("generate"), "-");
  EXPECT_TRUE(IsSwitch(Task::kSyncWeights));
  EXPECT_FALSE(IsSwitch(Task::kUpdateActor));
}

}  // namespace
}  // namespace moetrace::rl
