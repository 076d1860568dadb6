#include "tracegen/rl/rollout_sim.h"

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/rl/response_lengths.h"

namespace moetrace::tracegen::rl {
namespace {

InferenceCost TinyCost() { return InferenceCost(BuildConfig({"tiny-rl", "", {}, 0}), {1, 4, 4}); }

TEST(Rollout, PrefillThenOneDecodeStepPerToken) {
  const InferenceCost cost = TinyCost();
  // Two prompts of 128 tokens, responses of 2 and 4 tokens, both in flight:
  // one prefill chunk of 256 tokens, then decode steps of batch 2, 2 (the
  // first is done), 1, 1, over contexts 256, 258, 130, 131 (the first
  // sequence's 128 + 2 tokens leave the cache when it is done).
  auto r = SimulateRollout(cost, 8, {{128, 2}, {128, 4}}, 1024, 1000, 0);
  ASSERT_EQ(r.steps.size(), 5u);
  EXPECT_TRUE(r.steps[0].prefill);
  EXPECT_EQ(r.steps[0].new_tokens, 256);
  EXPECT_EQ(r.steps[0].dur, cost.Prefill(256, 2 * 128.0 * 129 / 2).dur);
  const int64_t batch[] = {2, 2, 1, 1}, context[] = {256, 258, 130, 131};
  TimeNs t = 1000 + r.steps[0].dur;
  for (int i = 0; i < 4; ++i) {
    const RolloutStep& s = r.steps[i + 1];
    EXPECT_FALSE(s.prefill);
    EXPECT_EQ(s.batch, batch[i]);
    EXPECT_EQ(s.start, t);
    EXPECT_EQ(s.dur, cost.Decode(batch[i], context[i]).dur) << i;
    EXPECT_EQ(s.bytes, cost.Decode(batch[i], context[i]).bytes) << i;
    t += s.dur;
  }
  // After the last step nothing is cached; after the first decode step the
  // 258 tokens of both sequences are, at 1280 / dp 4 = 320 bytes each.
  EXPECT_EQ(r.steps[1].kv_bytes, 258 * 320);
  EXPECT_EQ(r.steps[2].kv_bytes, 130 * 320);  // 260 less the first's 130
  EXPECT_EQ(r.steps[3].kv_bytes, 131 * 320);
  EXPECT_EQ(r.steps[4].kv_bytes, 0);
  // A decode step reads the card's cache: one more cached token, 320 more bytes.
  EXPECT_EQ(r.steps[4].bytes - r.steps[3].bytes, 320u);
  EXPECT_EQ(r.end, t);
  EXPECT_EQ(r.generated_tokens, 6);
}

TEST(Rollout, ContinuousBatchingRefillsAFreedSlot) {
  const InferenceCost cost = TinyCost();
  // max_batch 1: the second sequence is admitted (prefilled) once the first
  // is done: prefill, decode, decode, prefill, decode.
  auto r = SimulateRollout(cost, 1, {{128, 2}, {64, 1}}, 1024, 0, 0);
  ASSERT_EQ(r.steps.size(), 5u);
  EXPECT_TRUE(r.steps[0].prefill);
  EXPECT_FALSE(r.steps[2].prefill);
  EXPECT_TRUE(r.steps[3].prefill);
  EXPECT_EQ(r.steps[3].new_tokens, 64);
  EXPECT_EQ(r.steps[4].dur, cost.Decode(1, 64).dur);
}

TEST(Rollout, KvCapacityLimitsTheBatch) {
  // A sequence's cache lives in one of the instance's 4 attention-DP
  // groups. With the cap at a third of a group's capacity less one token,
  // each group holds two sequences: 8 of 9 at once although max_batch
  // allows 16; the ninth is admitted when they are done.
  const InferenceCost cost = TinyCost();
  const int64_t cap = cost.KvCapacityTokensPerGroup() / 3 - 128 + 1;
  EXPECT_EQ(cost.KvCapacityTokens(), 4 * cost.KvCapacityTokensPerGroup());
  auto r = SimulateRollout(cost, 16, std::vector<RolloutSequence>(9, {128, 1}), cap, 0, 0);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[0].batch, 8);
  EXPECT_EQ(r.steps[1].batch, 8);
  EXPECT_TRUE(r.steps[2].prefill);
  EXPECT_EQ(r.steps[2].batch, 1);
}

TEST(Rollout, ASequenceMustFitOneDpGroup) {
  // Pooled over the 4 groups the instance would hold prompt + cap; no
  // single group does, so no sequence can ever be admitted.
  const InferenceCost cost = TinyCost();
  const int64_t cap = 2 * cost.KvCapacityTokensPerGroup();
  EXPECT_THROW(SimulateRollout(cost, 8, {{128, 1}}, cap, 0, 0), std::logic_error);
}

TEST(Rollout, StepBackstop) {
  // Past max_steps the rollout is refused (an InputError naming the key),
  // not grown: 1 prefill + 3 decode steps do not fit in 3.
  const InferenceCost cost = TinyCost();
  InstanceRollout four(cost, 8, 1024, 4);
  four.Enqueue(0, {{128, 3}});
  EXPECT_EQ(four.Run(0, 0, -1, 0, nullptr).steps.size(), 4u);
  InstanceRollout three(cost, 8, 1024, 3);
  three.Enqueue(0, {{128, 3}});
  try {
    three.Run(0, 0, -1, 0, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rl.response_max: the rollout needs more than 3 steps"),
              std::string::npos)
        << e.what();
  }
}

// The long tail for a known set of lengths: instance A generates 3 tokens,
// instance B 7 (one sequence each, prompt 100). B's last 4 decode steps
// (batch 1 over 103..106 cached tokens) are A's cards' idle time:
// long-tail idle = 4 cards * sum of those 4 steps.
TEST(Rollout, LongTailIdleOfKnownLengths) {
  const InferenceCost cost = TinyCost();
  auto a = SimulateRollout(cost, 8, {{100, 3}}, 1024, 0, 0);
  auto b = SimulateRollout(cost, 8, {{100, 7}}, 1024, 0, 0);
  TimeNs tail = 0;
  for (int c = 103; c <= 106; ++c) tail += cost.Decode(1, c).dur;
  EXPECT_EQ(b.end - a.end, tail);
  EXPECT_EQ(LongTailIdle({a.end, b.end}, 4), 4 * tail);
}

}  // namespace
}  // namespace moetrace::tracegen::rl

namespace moetrace::tracegen::rl {
namespace {

// Partial rollout by hand: iteration 0 has responses of 2 and 10 tokens,
// iteration 1 of 3 and 3; prompts of 100; max_batch 2; quota 2.
// Rollout 0: prefill A, B; decode steps 1-2 (batch 2): A done; C (iteration
// 1) fills the slot: prefill C; decode steps 3-5: C done at step 5 -> the
// quota (A, C) is met; B, 5 of its 10 tokens generated, carries over.
// Rollout 1: one prefill of B again (100 + 5 tokens) and D (100), decode
// steps 6-8 (batch 2): D done; steps 9-10 (batch 1): B done.
TEST(Rollout, PartialRolloutCarriesTheLongTailOver) {
  const InferenceCost cost = TinyCost();
  InstanceRollout inst(cost, 2, 1024);
  inst.Enqueue(0, {{100, 2}, {100, 10}});
  inst.Enqueue(1, {{100, 3}, {100, 3}});
  std::vector<DoneSequence> done0, done1;
  auto r0 = inst.Run(0, 0, 2, 0, &done0);
  ASSERT_EQ(r0.steps.size(), 7u);
  EXPECT_TRUE(r0.steps[0].prefill);
  EXPECT_TRUE(r0.steps[3].prefill);
  EXPECT_EQ(r0.steps[3].new_tokens, 100);
  EXPECT_EQ(r0.generated_tokens, 10);
  ASSERT_EQ(done0.size(), 2u);
  EXPECT_EQ(done0[0].seq.response, 2);
  EXPECT_EQ(done0[1].iteration, 1);
  EXPECT_EQ(done0[1].first_rollout, 0);
  EXPECT_EQ(inst.in_flight(), 1);
  auto r1 = inst.Run(1, 5000, -1, 1, &done1);
  ASSERT_EQ(r1.steps.size(), 6u);
  EXPECT_EQ(r1.start, 5000);
  EXPECT_EQ(r1.steps[0].new_tokens, 205);
  EXPECT_EQ(r1.steps[0].batch, 2);
  EXPECT_EQ(r1.steps[0].dur, cost.Prefill(205, 105.0 * 106 / 2 + 100.0 * 101 / 2).dur);
  EXPECT_EQ(r1.steps[3].batch, 2);
  EXPECT_EQ(r1.steps[4].batch, 1);
  EXPECT_EQ(r1.generated_tokens, 8);
  ASSERT_EQ(done1.size(), 2u);
  EXPECT_EQ(done1[0].seq.response, 3);
  EXPECT_EQ(done1[1].seq.response, 10);
  EXPECT_EQ(done1[1].first_rollout, 0);
  EXPECT_EQ(inst.in_flight(), 0);
}

// The same with B started before `oldest_kept`: it must finish in rollout 0.
TEST(Rollout, PartialRolloutRespectsTheStalenessBound) {
  const InferenceCost cost = TinyCost();  // the instance keeps a reference
  InstanceRollout inst(cost, 2, 1024);
  inst.Enqueue(0, {{100, 2}, {100, 10}});
  inst.Enqueue(1, {{100, 3}, {100, 3}});
  std::vector<DoneSequence> done;
  inst.Run(0, 0, 2, 1, &done);
  // B done at step 10; C (3 tokens from step 2) at 5, D (from 5) at 8.
  EXPECT_EQ(done.size(), 4u);
  EXPECT_EQ(inst.in_flight(), 0);
}

}  // namespace
}  // namespace moetrace::tracegen::rl
