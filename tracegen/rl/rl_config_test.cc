#include "tracegen/rl/rl_config.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/rl/inference_cost.h"

namespace moetrace::tracegen::rl {
namespace {

std::string ErrorOf(std::vector<std::string> sets, std::string preset = "tiny-rl") {
  try {
    BuildConfig({preset, "", sets, 0});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RlConfig, WithoutRlNothingChanges) {
  // The section is never created for a pre-training run, so its JSON (in
  // every trace's metadata) is what it was before RL existed.
  const RunConfig c = BuildConfig({"tiny-moe", "", {}, 0});
  EXPECT_FALSE(c.has_rl());
  EXPECT_EQ(ConfigToJson(c).find("\"rl\""), std::string::npos);
  EXPECT_FALSE(HasRl(c));
  // An empty algorithm is no RL either, and is left as given.
  const RunConfig e = BuildConfig({"tiny-moe", "", {"rl.algorithm="}, 0});
  EXPECT_FALSE(HasRl(e));
  EXPECT_FALSE(e.rl().has_iterations());
}

TEST(RlConfig, DefaultsAndPools) {
  const RunConfig c = BuildConfig(
      {"tiny-moe", "", {"rl.algorithm=grpo", "rl.prompts_per_iteration=16", "rl.prompt_length=64",
                        "rl.response_mean=32"}, 0});
  EXPECT_EQ(c.rl().iterations(), 1);
  EXPECT_EQ(c.rl().samples_per_prompt(), 1);
  EXPECT_EQ(c.rl().response_distribution(), "fixed");
  EXPECT_EQ(c.rl().response_max(), 32);
  EXPECT_EQ(c.rl().placement(), "colocated");
  EXPECT_EQ(c.rl().staleness(), 0);
  EXPECT_EQ(c.rl().update_steps(), 1);
  EXPECT_EQ(c.rl().rollout().max_batch(), 256);
  EXPECT_DOUBLE_EQ(c.rl().rollout().kv_memory_fraction(), 0.9);
  EXPECT_EQ(RolloutPoolCards(c), 16);
  EXPECT_EQ(TotalCards(c), 16);
  const RunConfig s = BuildConfig({"tiny-rl", "", {"rl.placement=separate", "rl.rollout.cards=8"}, 0});
  EXPECT_EQ(RolloutPoolCards(s), 8);
  EXPECT_EQ(TotalCards(s), 24);
  EXPECT_EQ(SequencesPerIteration(s), 32);
}

TEST(RlConfig, ErrorsNameTheKey) {
  auto has = [](const std::string& err, const char* what) {
    return err.find(what) != std::string::npos;
  };
  EXPECT_TRUE(has(ErrorOf({"rl.algorithm=dpo"}), "rl.algorithm: 'dpo' is not one of grpo, ppo"));
  EXPECT_TRUE(has(ErrorOf({"rl.placement=mixed"}), "rl.placement"));
  EXPECT_TRUE(has(ErrorOf({"rl.response_distribution=zipf"}), "rl.response_distribution"));
  EXPECT_TRUE(has(ErrorOf({"rl.response_max=100"}), "rl.response_max: 100 is below"));
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.dp=3"}), "rl.rollout.tp: an instance of tp*dp = 1*3"));
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.ep=8"}), "rl.rollout.ep: ep 8 does not divide the instance"));
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.tp=3", "rl.rollout.dp=1", "rl.rollout.ep=1"}),
                  "rl.rollout.tp: an instance"));
  EXPECT_TRUE(has(ErrorOf({"rl.placement=separate"}), "rl.rollout.cards: must be >= 1"));
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.cards=-16"}), "rl.rollout.cards: must be >= 0 (got -16)"));
  EXPECT_TRUE(has(ErrorOf({"rl.update_steps=3"}), "rl.update_steps: prompts*samples = 32"));
  EXPECT_TRUE(has(ErrorOf({"rl.update_steps=8"}), "rl.prompts_per_iteration: 4 sequences per update"));
  EXPECT_TRUE(has(ErrorOf({"rl.staleness=3"}), "rl.staleness: 3 exceeds rl.iterations 2"));
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.kv_memory_fraction=0"}), "rl.rollout.kv_memory_fraction"));
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.max_batch=0"}), "rl.rollout.max_batch"));
  // 718B on instances of 4 cards: 1.4 TB of weights do not fit 4 x 128 GB.
  EXPECT_TRUE(has(ErrorOf({"rl.rollout.tp=4", "rl.rollout.dp=1", "rl.rollout.ep=4"},
                          "pangu-ultra-moe-718b-rl"),
                  "exceed the HBM"));
  EXPECT_EQ(ErrorOf({}), "");
  EXPECT_EQ(ErrorOf({}, "pangu-ultra-moe-718b-rl"), "");
}

TEST(RlConfig, SizeIsBoundedBeforeAnythingIsAllocated) {
  // Each factor is in range, their product is not: 2 iterations x 4
  // instances x (8 waves of max_batch 1 + 1) x 2 M tokens x 2 = 2.9e8 steps.
  const std::string steps =
      ErrorOf({"rl.response_distribution=fixed", "rl.response_mean=2000000",
               "rl.response_max=2000000", "rl.rollout.max_batch=1"});
  EXPECT_NE(steps.find("rl.response_max: the rollout may take 2.88e+08 steps, more than 100000000"),
            std::string::npos)
      << steps;
  EXPECT_NE(steps.find("rl.rollout.max_batch"), std::string::npos);
  // Few steps (responses of 1 token, one wave) but 1000 x 131,072 response
  // lengths drawn up front.
  const std::string lengths =
      ErrorOf({"rl.iterations=1000", "rl.prompts_per_iteration=32768",
               "rl.response_distribution=fixed", "rl.response_mean=1", "rl.response_max=1",
               "rl.rollout.max_batch=100000"});
  EXPECT_NE(lengths.find("rl.iterations: rl.iterations x rl.prompts_per_iteration x "
                         "rl.samples_per_prompt = 1.31e+08 responses, more than 100000000"),
            std::string::npos)
      << lengths;
  // Card-steps: 2 x 4 iterations x 1 instance x (1 wave + 1) x 1 M = 1.6e7
  // steps, fewer than 1e8, but emitted by each of the instance's 64 cards.
  const std::string cards =
      ErrorOf({"rl.placement=separate", "rl.rollout.cards=64", "rl.rollout.dp=64",
               "rl.rollout.ep=16", "rl.iterations=4", "rl.response_distribution=fixed",
               "rl.response_mean=1000000", "rl.response_max=1000000", "rl.rollout.max_batch=32"});
  EXPECT_NE(cards.find("rl.response_max: the rollout may emit 1.02e+09 card-steps, more than "
                       "1000000000"),
            std::string::npos)
      << cards;
  EXPECT_EQ(ErrorOf({"rl.response_mean=100000", "rl.response_max=100000"}), "");
}

TEST(RlConfig, KvCapacityIsPerAttentionDpGroup) {
  // tiny-rl's instance is dp 4: at this fraction one group holds fewer
  // tokens than prompt + response_max = 1152, the four together more.
  const RunConfig ok = BuildConfig({"tiny-rl", "", {}, 0});
  const InferenceCost cost(ok, {1, 4, 4});
  const double per_token = cost.KvBytesPerTokenPerCard();
  const double fraction =
      600.5 * per_token / (ok.hardware().hbm_bytes() - cost.WeightBytesPerCard());
  const std::string err =
      ErrorOf({fmt::format("rl.rollout.kv_memory_fraction={:.17g}", fraction)});
  EXPECT_NE(err.find("rl.rollout.kv_memory_fraction: an attention-DP group's KV cache holds 600 "
                     "tokens, less than one sequence of prompt + response_max = 1152"),
            std::string::npos)
      << err;
}

// `generate --steps N` on an RL config sets the iterations (an RL run has no
// training steps of its own to count); a pre-training config keeps `steps`.
TEST(RlConfig, StepsRequestCountsIterations) {
  const RunConfig c = BuildConfig({"tiny-rl", "", {}, 3});
  EXPECT_EQ(c.rl().iterations(), 3);
  EXPECT_EQ(c.steps(), BuildConfig({"tiny-rl", "", {}, 0}).steps());
  EXPECT_EQ(BuildConfig({"tiny-moe", "", {}, 3}).steps(), 3);
  // Staleness is checked against the iterations --steps asked for.
  EXPECT_THROW(BuildConfig({"tiny-rl", "", {"rl.staleness=2"}, 1}), InputError);
}

}  // namespace
}  // namespace moetrace::tracegen::rl
