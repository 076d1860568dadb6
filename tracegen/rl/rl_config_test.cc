#include "tracegen/rl/rl_config.h"

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "tracegen/config.h"

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

}  // namespace
}  // namespace moetrace::tracegen::rl
