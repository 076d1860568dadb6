#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/rl/inference_cost.h"
#include "tracegen/rl/response_lengths.h"
#include "tracegen/rl/rl_plan.h"
#include "tracegen/rl/switch_cost.h"

namespace moetrace::tracegen::rl {
namespace {

RunConfig Tiny(std::vector<std::string> sets = {}) { return BuildConfig({"tiny-rl", "", sets, 0}); }

// tiny-rl's actor update per card, pinned (PpoAddsTheCritic).
constexpr uint64_t kTinyCriticFlops = 356485920768;

double Label(const Plan& plan, int iteration, const std::string& key) {
  for (const auto& l : plan.labels)
    if (l.step == iteration && l.key == key) return l.value;
  ADD_FAILURE() << "no label " << key << " for iteration " << iteration;
  return -1;
}

void ExpectNoOverlap(const Plan& plan) {
  for (size_t c = 0; c < plan.card.size(); ++c) {
    const auto& ph = plan.card[c].phases;
    for (size_t i = 0; i < ph.size(); ++i) {
      EXPECT_LE(ph[i].start, ph[i].end);
      if (i > 0) EXPECT_LE(ph[i - 1].end, ph[i].start) << "card " << c << " phase " << i;
    }
  }
}

// Fixed lengths, colocated, staleness 0: each of the 4 instances (tp 1, dp
// 4) gets 32 / 4 = 8 sequences of prompt 128 + response 256, all in flight
// (max_batch 8): rollout = one prefill of 8 * 128 tokens + 256 decode steps
// of batch 8 over 1024, 1032, ..., 1024 + 255 * 8 cached tokens. Then
// reshard_to_train, compute_log_prob and compute_ref_log_prob (forwards of
// 32 * 384 tokens on the 16 training cards), update_actor (the slowest
// card's engine run), reshard_to_infer. The iteration is exactly the sum.
TEST(RlModel, SynchronousIterationIsTheSumOfItsParts) {
  const RunConfig c = Tiny({"rl.response_distribution=fixed", "rl.iterations=1"});
  const Plan plan = BuildPlan(c, 1);
  const InferenceCost infer(c, {1, 4, 4});
  TimeNs rollout = infer.Prefill(8 * 128, 8 * 128.0 * 129 / 2).dur;
  for (int s = 0; s < 256; ++s) rollout += infer.Decode(8, 1024 + 8 * s).dur;
  const InferenceCost score(c, {1, 16, 8});
  const TimeNs scoring = 2 * score.Prefill(32 * 384, 32 * 384.0 * 385 / 2).dur;
  const auto ends = plan.train_engine->RankEndTimes();
  const TimeNs training = *std::max_element(ends.begin(), ends.end());
  const SwitchCosts sw = ComputeSwitchCosts(c);
  const TimeNs sw_ns = sw.to_train.dur() + sw.to_infer.dur();
  EXPECT_GT(sw_ns, 0);
  EXPECT_EQ(Label(plan, 0, "phases.generate_sequences.time_ns"), rollout);
  EXPECT_EQ(Label(plan, 0, "switch_ns"), sw_ns);
  EXPECT_EQ(Label(plan, 0, "time_ns"), rollout + scoring + training + sw_ns);
  EXPECT_EQ(Label(plan, 0, "long_tail_idle_card_ns"), 0);  // every instance ends together
  EXPECT_EQ(Label(plan, 0, "generated_tokens"), 32 * 256);
  EXPECT_EQ(Label(plan, 0, "trained_tokens"), 32 * 384);
  EXPECT_EQ(Label(plan, 0, "staleness"), 0);
  // The training layout: 16 sequences per optimizer step, packed at 128 +
  // 256 tokens, 2 steps.
  EXPECT_EQ(plan.train_config.model().seq_length(), 384);
  EXPECT_EQ(plan.train_config.parallel().global_batch_size(), 16);
  EXPECT_EQ(plan.train_config.steps(), 2);
  EXPECT_FALSE(plan.train_config.has_rl());
  ExpectNoOverlap(plan);
}

// With lognormal lengths the label is the long tail of the instances' ends.
TEST(RlModel, LongTailIdleOfTheDrawnLengths) {
  const Plan plan = BuildPlan(Tiny(), 1);
  for (int it = 0; it < 2; ++it) {
    std::vector<TimeNs> ends;
    for (const auto& inst : plan.instances) ends.push_back(inst.iterations[it].end);
    EXPECT_GT(LongTailIdle(ends, 4), 0);
    EXPECT_EQ(Label(plan, it, "long_tail_idle_card_ns"), LongTailIdle(ends, 4));
  }
  EXPECT_EQ(plan.response_lengths, DrawResponseLengths(plan.config.rl(), 1, 0, 32));
}

// Separate pools (16 training + 16 rollout cards), fixed lengths. R: the
// rollout, T: scoring + update, S: sync_weights. Synchronous: every
// iteration takes R + T + S. Staleness 1: rollout i+1 needs the weights of
// update i-1 only, so it runs while iteration i trains; the syncs cannot
// overlap (they hold both pools): the steady state is max(R, T) + S.
// Responses of 256 tokens make R > T: iteration 0 takes R + R + S (its sync
// waits for rollout 1 to free the pool), 1 and 2 take R + S, the last drains
// in T + S. Responses of 4 tokens make T > R: iteration 0 takes R + T + S,
// every later one T + S.
TEST(RlModel, StaleSyncOverlapsRolloutAndTraining) {
  for (const char* mean : {"256", "4"}) {
    SCOPED_TRACE(mean);
    const std::vector<std::string> sets = {
        "rl.response_distribution=fixed", "rl.iterations=4", "rl.placement=separate",
        "rl.rollout.cards=16", std::string("rl.response_mean=") + mean,
        std::string("rl.response_max=") + mean};
    const Plan sync = BuildPlan(Tiny(sets), 1);
    auto with = sets;
    with.push_back("rl.staleness=1");
    const Plan stale = BuildPlan(Tiny(with), 1);
    const TimeNs R = Label(sync, 0, "phases.generate_sequences.time_ns");
    const TimeNs S = Label(sync, 0, "phases.sync_weights.time_ns");
    const TimeNs T = Label(sync, 0, "phases.compute_log_prob.time_ns") +
                     Label(sync, 0, "phases.compute_ref_log_prob.time_ns") +
                     Label(sync, 0, "phases.update_actor.time_ns");
    EXPECT_GT(S, 0);
    for (int it = 0; it < 4; ++it) EXPECT_EQ(Label(sync, it, "time_ns"), R + T + S);
    if (R > T) {
      EXPECT_EQ(Label(stale, 0, "time_ns"), 2 * R + S);
      EXPECT_EQ(Label(stale, 3, "time_ns"), T + S);
    } else {
      EXPECT_EQ(Label(stale, 0, "time_ns"), R + T + S);
      EXPECT_EQ(Label(stale, 3, "time_ns"), T + S);
    }
    for (int it = 1; it < 3; ++it)
      EXPECT_EQ(Label(stale, it, "time_ns"), std::max(R, T) + S) << it;
    EXPECT_EQ(Label(stale, 0, "staleness"), 0);
    for (int it = 1; it < 4; ++it) EXPECT_EQ(Label(stale, it, "staleness"), 1);
    EXPECT_EQ(stale.cards, 32);
    EXPECT_EQ(stale.card[20].instance, 1);
    EXPECT_EQ(stale.card[20].train_rank, -1);
    ExpectNoOverlap(sync);
    ExpectNoOverlap(stale);
  }
}

// Colocated with staleness 1: partial rollout. Each instance stops at its
// quota of 8 responses and refills freed slots with the next iteration's
// prompts, so the long tail shrinks; every response is trained once, at
// most one version late.
TEST(RlModel, PartialRolloutShortensTheLongTail) {
  const Plan sync = BuildPlan(Tiny({"rl.iterations=3"}), 1);
  const Plan stale = BuildPlan(Tiny({"rl.iterations=3", "rl.staleness=1"}), 1);
  int64_t sync_tokens = 0, stale_tokens = 0;
  for (int it = 0; it < 3; ++it) {
    sync_tokens += sync.trained_tokens[it];
    stale_tokens += stale.trained_tokens[it];
  }
  EXPECT_EQ(stale_tokens, sync_tokens);  // the same responses, trained once each
  EXPECT_LT(Label(stale, 0, "phases.generate_sequences.time_ns"),
            Label(sync, 0, "phases.generate_sequences.time_ns"));
  EXPECT_LT(Label(stale, 0, "long_tail_idle_card_ns"), Label(sync, 0, "long_tail_idle_card_ns"));
  // Iteration 1 trains responses begun with iteration 0's weights: one
  // version late. Colocated, the phases never overlap, so the ranges alone
  // show 0; the label (and analyze, through rl.staleness.<i>) is that lag.
  EXPECT_EQ(stale.staleness[0], 0);
  EXPECT_EQ(stale.staleness[1], 1);
  EXPECT_EQ(sync.staleness[1], 0);
  EXPECT_EQ(Label(stale, 1, "staleness"), 1);
  ExpectNoOverlap(stale);
  // The drain (iteration 2): instance 3 has nothing left to decode, so its
  // cards have no rollout range (a zero-length one would read as an
  // instant in the trace and count as long-tail wait in the label).
  int drain_rollouts = 0;
  for (const CardPlan& card : stale.card)
    for (const PhaseSpan& ph : card.phases) {
      EXPECT_GT(ph.end, ph.start) << TaskName(ph.task) << " iteration " << ph.iteration;
      drain_rollouts += ph.iteration == 2 && ph.task == Task::kGenerateSequences;
    }
  EXPECT_EQ(drain_rollouts, 12);
}

TEST(RlModel, PpoAddsTheCritic) {
  const Plan plan = BuildPlan(Tiny({"rl.algorithm=ppo", "rl.reward_model=true",
                                    "rl.iterations=1"}), 1);
  std::map<std::string, int> seen;
  for (const auto& ph : plan.card[0].phases) ++seen[std::string(TaskName(ph.task))];
  EXPECT_EQ(seen, (std::map<std::string, int>{{"compute_log_prob", 1}, {"compute_ref_log_prob", 1},
                                              {"compute_rm_score", 1}, {"compute_values", 1},
                                              {"generate_sequences", 1}, {"reshard_to_infer", 1},
                                              {"reshard_to_train", 1}, {"update_actor", 1},
                                              {"update_critic", 1}}));
  EXPECT_EQ(RoleName(Task::kUpdateCritic), "critic");
  EXPECT_EQ(RoleName(Task::kComputeRmScore), "reward");
  ExpectNoOverlap(plan);
  // The critic's update carries the actor update's model FLOPs per card
  // (model_flops_per_step x update_steps / 16 cards); the actor's own span
  // has none (its events are the engine's).
  const double per_card = plan.train_engine->BaseMetadata().model_flops_per_step *
                          plan.train_config.steps() / 16;
  for (const auto& ph : plan.card[5].phases) {
    if (ph.task == Task::kUpdateCritic) EXPECT_EQ(ph.flops, uint64_t(std::llround(per_card)));
    if (ph.task == Task::kUpdateActor) EXPECT_EQ(ph.flops, 0u);
  }
  EXPECT_EQ(uint64_t(std::llround(per_card)), kTinyCriticFlops);
}

TEST(RlModel, DeterministicForAnyThreadCount) {
  const Plan a = BuildPlan(Tiny(), 1), b = BuildPlan(Tiny(), 2);
  EXPECT_EQ(a.labels, b.labels);
  ASSERT_EQ(a.card.size(), b.card.size());
  for (size_t c = 0; c < a.card.size(); ++c) {
    ASSERT_EQ(a.card[c].phases.size(), b.card[c].phases.size());
    for (size_t i = 0; i < a.card[c].phases.size(); ++i) {
      EXPECT_EQ(a.card[c].phases[i].start, b.card[c].phases[i].start);
      EXPECT_EQ(a.card[c].phases[i].end, b.card[c].phases[i].end);
    }
  }
}

TEST(RlModel, PanguPresetPlansOneCloudMatrix) {
#ifdef MOETRACE_SANITIZED
  GTEST_SKIP() << "the optimised build runs it (23 s optimised, 109 s under ASan)";
#endif
  const Plan plan = BuildPlan(BuildConfig({"pangu-ultra-moe-718b-rl", "", {}, 0}), 2);
  EXPECT_EQ(plan.cards, 384);
  EXPECT_EQ(plan.instances.size(), 12u);  // 384 / (tp 4 x dp 8)
  EXPECT_EQ(plan.generated_tokens.size(), 1u);
  EXPECT_GT(Label(plan, 0, "long_tail_idle_card_ns"), 0);
  ExpectNoOverlap(plan);
}

}  // namespace
}  // namespace moetrace::tracegen::rl
