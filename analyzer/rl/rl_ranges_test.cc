// A card's RL phases from its host tracks.
#include "analyzer/rl/rl_ranges.h"

#include <gtest/gtest.h>

#include "analyzer/rl/rl_test_trace.h"
#include "formats/kineto/kineto_importer.h"

namespace moetrace::rl {
namespace {

using traces::Range;

TEST(RlRanges, ColocatedCardZero) {
  const Trace t = traces::Colocated();
  const CardPhases c = CollectPhases(t.ranks[0]);
  EXPECT_EQ(c.rank, 0);
  // 5 per iteration; the nested annotation, the step marker, the unknown
  // marker are not phases (the unknown marker counted).
  ASSERT_EQ(c.ranges.size(), 10u);
  EXPECT_EQ(c.ignored_markers, 1);
  EXPECT_EQ(c.ranges[0], (PhaseRange{0, Task::kGenerateSequences, Role::kRollout, 0, 100, 600}));
  EXPECT_EQ(c.ranges[1], (PhaseRange{0, Task::kReshardToTrain, Role::kActor, 100, 110, -1}));
  EXPECT_EQ(c.ranges[4], (PhaseRange{0, Task::kReshardToInfer, Role::kActor, 180, 190, -1}));
  // 1000 - 600 tokens over [200, 290).
  EXPECT_EQ(c.ranges[5], (PhaseRange{1, Task::kGenerateSequences, Role::kRollout, 200, 290, 400}));
  // Card 2 never rolls out and has no counter.
  const CardPhases c2 = CollectPhases(t.ranks[2]);
  ASSERT_EQ(c2.ranges.size(), 8u);
  EXPECT_EQ(c2.ranges[1], (PhaseRange{0, Task::kComputeRefLogProb, Role::kRef, 110, 130, -1}));
}

// A Kineto trace of verl: user_annotation host ops, no steps. Iterations
// follow the rollouts; an undirected "resharding" goes to training after a
// rollout and to inference after an update.
TEST(RlRanges, KinetoUserAnnotationsWithoutSteps) {
  Rank r;
  r.rank = 7;
  const Category op = Category::kHostOp;
  Range(&r, "rollout_generate", 1000, 2000, kNone, op);
  Range(&r, "resharding", 2000, 2100, kNone, op);
  Range(&r, "actor_compute_log_prob", 2100, 2300, kNone, op);
  Range(&r, "aten::mm", 2150, 2160, kNone, op);  // inside, not RL anyway
  Range(&r, "actor_update", 2300, 3000, kNone, op);
  Range(&r, "resharding", 3000, 3100, kNone, op);
  Range(&r, "actor_rollout_ref/generate_sequences", 3100, 4000, kNone, op);
  Range(&r, "actor_update", 4000, 4500, kNone, op);
  r.tracks[0].events.SortByTime();
  // No steps: the iteration is decided over the cards (AssignIterations).
  std::vector<CardPhases> cards = {CollectPhases(r)};
  EXPECT_EQ(cards[0].ranges[3].iteration, kNoIteration);
  AssignIterations(&cards);
  const CardPhases& c = cards[0];
  EXPECT_EQ(c.rank, 7);
  EXPECT_EQ(c.ignored_markers, 0);  // host ops are not markers
  ASSERT_EQ(c.ranges.size(), 7u);
  EXPECT_EQ(c.ranges[0], (PhaseRange{0, Task::kGenerateSequences, Role::kRollout, 1000, 2000, -1}));
  EXPECT_EQ(c.ranges[1], (PhaseRange{0, Task::kReshardToTrain, Role::kActor, 2000, 2100, -1}));
  EXPECT_EQ(c.ranges[2], (PhaseRange{0, Task::kComputeLogProb, Role::kActor, 2100, 2300, -1}));
  EXPECT_EQ(c.ranges[3], (PhaseRange{0, Task::kUpdateActor, Role::kActor, 2300, 3000, -1}));
  EXPECT_EQ(c.ranges[4], (PhaseRange{0, Task::kReshardToInfer, Role::kActor, 3000, 3100, -1}));
  EXPECT_EQ(c.ranges[5], (PhaseRange{1, Task::kGenerateSequences, Role::kRollout, 3100, 4000, -1}));
  EXPECT_EQ(c.ranges[6], (PhaseRange{1, Task::kUpdateActor, Role::kActor, 4000, 4500, -1}));
}

// Through the Kineto importer: verl's DistProfiler ranges are
// `user_annotation` events (µs), inner `cpu_op`s are not phases.
TEST(RlRanges, KinetoJsonOfVerl) {
  const Rank r = ImportKinetoJson(R"J({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "hccl", "rank": 5, "world_size": 8},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "rollout_generate", "pid": 10, "tid": 10, "ts": 1000, "dur": 400},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1010, "dur": 20},
  {"ph": "X", "cat": "user_annotation", "name": "actor_compute_log_prob", "pid": 10, "tid": 10, "ts": 1400, "dur": 50},
  {"ph": "X", "cat": "user_annotation", "name": "ref_compute_log_prob", "pid": 10, "tid": 10, "ts": 1450, "dur": 60},
  {"ph": "X", "cat": "user_annotation", "name": "actor_update", "pid": 10, "tid": 10, "ts": 1510, "dur": 300.5},
  {"ph": "X", "cat": "user_annotation", "name": "my_region", "pid": 10, "tid": 10, "ts": 1900, "dur": 5}
  ]})J");
  std::vector<CardPhases> cards = {CollectPhases(r)};
  AssignIterations(&cards);
  const CardPhases& c = cards[0];
  EXPECT_EQ(c.rank, 5);
  ASSERT_EQ(c.ranges.size(), 4u);
  EXPECT_EQ(c.ranges[0], (PhaseRange{0, Task::kGenerateSequences, Role::kRollout, 1'000'000, 1'400'000, -1}));
  EXPECT_EQ(c.ranges[1], (PhaseRange{0, Task::kComputeLogProb, Role::kActor, 1'400'000, 1'450'000, -1}));
  EXPECT_EQ(c.ranges[2], (PhaseRange{0, Task::kComputeRefLogProb, Role::kRef, 1'450'000, 1'510'000, -1}));
  EXPECT_EQ(c.ranges[3], (PhaseRange{0, Task::kUpdateActor, Role::kActor, 1'510'000, 1'810'500, -1}));
}

TEST(RlRanges, NoRlPhasesGiveNothing) {
  Rank r;
  Range(&r, "forward", 0, 10, kNone, Category::kHostOp);
  Range(&r, "my_marker", 0, 10);
  const CardPhases c = CollectPhases(r);
  EXPECT_TRUE(c.ranges.empty());
  EXPECT_EQ(c.ignored_markers, 1);
}

// Phases among many launches (a training card's host thread): found in
// the first 16 categories, at the last of a block of 16, in a later block
// and in the tail after the last whole block.
TEST(RlRanges, PhasesAmongLaunchesAreAllFound) {
  Rank r;
  const std::pair<size_t, const char*> at[] = {{3, "rollout/generate_sequences"},
                                               {31, "actor/reshard_to_train"},
                                               {40, "actor/update_actor"},
                                               {49, "actor/reshard_to_infer"}};
  size_t next = 0;
  for (size_t i = 0; i < 50; ++i) {
    const TimeNs t = static_cast<TimeNs>(i) * 10;
    if (next < std::size(at) && at[next].first == i) {
      Range(&r, at[next++].second, t, t + 10, 0, Category::kHostOp);
    } else {
      Range(&r, "aclnnMatmul", t, t + 5, 0, Category::kLaunch);
    }
  }
  const CardPhases c = CollectPhases(r);
  ASSERT_EQ(c.ranges.size(), 4u);
  EXPECT_EQ(c.ranges[0], (PhaseRange{0, Task::kGenerateSequences, Role::kRollout, 30, 40, -1}));
  EXPECT_EQ(c.ranges[1], (PhaseRange{0, Task::kReshardToTrain, Role::kActor, 310, 320, -1}));
  EXPECT_EQ(c.ranges[2], (PhaseRange{0, Task::kUpdateActor, Role::kActor, 400, 410, -1}));
  EXPECT_EQ(c.ranges[3], (PhaseRange{0, Task::kReshardToInfer, Role::kActor, 490, 500, -1}));
  EXPECT_EQ(c.ignored_markers, 0);
}

// An instance given no sequence has a zero-length rollout range where the
// previous phase ended: a phase of its own (its long-tail idle counts), not
// one nested in that phase. One strictly inside a range is nested.
TEST(RlRanges, ZeroLengthRangeAtAnEndIsKept) {
  Rank r;
  Range(&r, "actor/reshard_to_infer", 50, 100, 0);
  Range(&r, "rollout/generate_sequences", 70, 70, 1);
  Range(&r, "rollout/generate_sequences", 100, 100, 1);
  Range(&r, "actor/reshard_to_train", 100, 120, 1);
  r.tracks[0].events.SortByTime();
  const CardPhases c = CollectPhases(r);
  ASSERT_EQ(c.ranges.size(), 3u);
  EXPECT_EQ(c.ranges[1], (PhaseRange{1, Task::kGenerateSequences, Role::kRollout, 100, 100, -1}));
  EXPECT_EQ(c.ranges[2], (PhaseRange{1, Task::kReshardToTrain, Role::kActor, 100, 120, -1}));
}

// FSDP2 annotates its own reshards: alone on a card they are no RL phase;
// with an RL role prefix, or next to an RL task, a bare switch counts.
TEST(RlRanges, BareReshardCountsOnlyNextToRlWork) {
  const Category op = Category::kHostOp;
  Rank fsdp;
  Range(&fsdp, "FSDP::post_backward_reshard (layers.0)", 0, 10, kNone, op);
  Range(&fsdp, "FSDP::pre_forward_offload", 20, 30, kNone, op);
  EXPECT_TRUE(CollectPhases(fsdp).ranges.empty());
  Rank prefixed;
  Range(&prefixed, "actor/offload", 0, 10, kNone, op);
  ASSERT_EQ(CollectPhases(prefixed).ranges.size(), 1u);
  EXPECT_EQ(CollectPhases(prefixed).ranges[0].task, Task::kReshardToInfer);
  Rank rl;
  Range(&rl, "update_actor", 0, 10, kNone, op);
  Range(&rl, "FSDP::post_backward_reshard (layers.0)", 20, 30, kNone, op);
  ASSERT_EQ(CollectPhases(rl).ranges.size(), 2u);
}

// Separate pools recorded without steps (Kineto): the rollout card runs
// three rollouts, the training card three updates, each after its rollout.
// An update belongs to the last rollout wave started before it.
TEST(RlRanges, IterationsWithoutStepsAreJobWide) {
  const Category op = Category::kHostOp;
  std::vector<Rank> r(2);
  for (int i = 0; i < 3; ++i) {
    Range(&r[0], "generate_sequences", 1000 + 1000 * i, 1400 + 1000 * i, kNone, op);
    Range(&r[1], "update_actor", 1500 + 1000 * i, 1900 + 1000 * i, kNone, op);
  }
  r[1].rank = 1;
  std::vector<CardPhases> cards = {CollectPhases(r[1]), CollectPhases(r[0])};
  AssignIterations(&cards);
  ASSERT_EQ(cards[0].ranges.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cards[0].ranges[size_t(i)].iteration, i);
    EXPECT_EQ(cards[1].ranges[size_t(i)].iteration, i);
  }
}

}  // namespace
}  // namespace moetrace::rl
