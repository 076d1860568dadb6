// The `rl` section of hand-built traces, through `Analyze`; every figure
// worked out by hand from rl_test_trace.h.
#include "analyzer/rl/rl_section.h"

#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "analyzer/rl/rl_test_trace.h"
#include "analyzer/stable_json.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/trace_io.h"

namespace moetrace::rl {
namespace {

analysis::Analysis AnalyzeTrace(Trace t) {
  MemorySource src(std::move(t));
  AnalyzeOptions opt;
  opt.threads = 2;
  return Analyze(src, opt);
}

void ExpectPhase(const analysis::RlPhase& p, const char* task, const char* role, int64_t start,
                 int64_t time, int64_t card_ns, int cards, int64_t window) {
  EXPECT_EQ(p.task(), task);
  EXPECT_EQ(p.role(), role) << task;
  EXPECT_EQ(p.start_ns(), start) << task;
  EXPECT_EQ(p.time_ns(), time) << task;
  EXPECT_EQ(p.card_ns(), card_ns) << task;
  EXPECT_EQ(p.cards(), cards) << task;
  EXPECT_EQ(p.share(), static_cast<double>(time) / static_cast<double>(window)) << task;
}

TEST(RlSection, ColocatedEveryFigure) {
  const analysis::Analysis a = AnalyzeTrace(traces::Colocated());
  ASSERT_TRUE(a.has_rl());
  const analysis::Rl& rl = a.rl();
  EXPECT_TRUE(rl.present());
  EXPECT_EQ(rl.placement(), "colocated");
  EXPECT_EQ(rl.cards(), 4);
  EXPECT_EQ(rl.ignored_markers(), 1);
  ASSERT_EQ(rl.iterations_size(), 2);

  const analysis::RlIteration& i0 = rl.iterations(0);
  EXPECT_EQ(i0.iteration(), 0);
  EXPECT_EQ(i0.start_ns(), 0);
  EXPECT_EQ(i0.time_ns(), 190);
  ASSERT_EQ(i0.phases_size(), 6);
  // By start; log-prob and reference both start at 110 (task order).
  ExpectPhase(i0.phases(0), "generate_sequences", "rollout", 0, 100, 180, 2, 190);
  ExpectPhase(i0.phases(1), "reshard_to_train", "actor", 100, 10, 40, 4, 190);
  ExpectPhase(i0.phases(2), "compute_log_prob", "actor", 110, 15, 30, 2, 190);
  ExpectPhase(i0.phases(3), "compute_ref_log_prob", "ref", 110, 20, 40, 2, 190);
  ExpectPhase(i0.phases(4), "update_actor", "actor", 130, 50, 200, 4, 190);
  ExpectPhase(i0.phases(5), "reshard_to_infer", "actor", 180, 10, 40, 4, 190);
  // Cards 0..3 busy 185, 165, 90, 90.
  EXPECT_EQ(i0.busy_card_ns(), 530);
  EXPECT_EQ(i0.utilization(), 530.0 / 760.0);
  // Card 1 waits 100 - 80 for card 0's rollout.
  EXPECT_EQ(i0.long_tail_idle_card_ns(), 20);
  // [100, 110) and [180, 190).
  EXPECT_EQ(i0.switch_ns(), 20);
  // Card 0: 600 - 0, card 1: 400 - 0.
  EXPECT_EQ(i0.generated_tokens(), 1000);
  EXPECT_EQ(i0.trained_tokens(), 5000);
  EXPECT_EQ(i0.staleness(), 0);

  const analysis::RlIteration& i1 = rl.iterations(1);
  EXPECT_EQ(i1.iteration(), 1);
  EXPECT_EQ(i1.start_ns(), 190);  // the previous window's end: 10 ns of waiting included
  EXPECT_EQ(i1.time_ns(), 200);
  ExpectPhase(i1.phases(0), "generate_sequences", "rollout", 200, 100, 190, 2, 200);
  ExpectPhase(i1.phases(4), "update_actor", "actor", 330, 50, 200, 4, 200);
  // Cards 0..3 busy 175, 185, 90, 90.
  EXPECT_EQ(i1.busy_card_ns(), 540);
  EXPECT_EQ(i1.utilization(), 540.0 / 800.0);
  EXPECT_EQ(i1.long_tail_idle_card_ns(), 10);
  EXPECT_EQ(i1.switch_ns(), 20);
  // Card 0: 1000 - 600, card 1: 1000 - 400.
  EXPECT_EQ(i1.generated_tokens(), 1000);
  EXPECT_EQ(i1.staleness(), 0);

  EXPECT_EQ(rl.staleness(), 0);
  EXPECT_EQ(rl.iteration_time_ns(), 200);
  EXPECT_EQ(rl.utilization(), 1070.0 / 1560.0);
  EXPECT_EQ(rl.long_tail_idle_share(), 30.0 / 1560.0);
  EXPECT_EQ(rl.switch_share(), 40.0 / 390.0);
  EXPECT_EQ(rl.generated_tokens_per_s(), 2000.0 * 1e9 / 390.0);
  EXPECT_EQ(rl.trained_tokens_per_s(), 10000.0 * 1e9 / 390.0);
}

// Two cards record one instance's counter: its tokens count once.
TEST(RlSection, InstanceCardsDivideTheCounters) {
  Trace t = traces::Colocated();
  t.metadata.attributes.push_back({"rl.instance_cards", "2"});
  const analysis::Analysis a = AnalyzeTrace(std::move(t));
  EXPECT_EQ(a.rl().iterations(0).generated_tokens(), 500);
  EXPECT_EQ(a.rl().generated_tokens_per_s(), 1000.0 * 1e9 / 390.0);
}

// StaleSync on separate pools: each rollout after the first starts while
// the previous iteration's update runs.
TEST(RlSection, SeparatePoolsStalenessOne) {
  const analysis::Analysis a = AnalyzeTrace(traces::Separate());
  const analysis::Rl& rl = a.rl();
  EXPECT_EQ(rl.placement(), "separate");
  EXPECT_EQ(rl.cards(), 4);
  ASSERT_EQ(rl.iterations_size(), 3);
  EXPECT_EQ(rl.iterations(0).staleness(), 0);
  // Rollout 1 began at 100, update 0 ended at 220.
  EXPECT_EQ(rl.iterations(1).staleness(), 1);
  // Rollout 2 began at 230: update 0 had ended, update 1 (to 350) had not.
  EXPECT_EQ(rl.iterations(2).staleness(), 1);
  EXPECT_EQ(rl.staleness(), 1);
  EXPECT_EQ(rl.iterations(0).start_ns(), 0);
  EXPECT_EQ(rl.iterations(0).time_ns(), 230);
  EXPECT_EQ(rl.iterations(1).start_ns(), 230);
  EXPECT_EQ(rl.iterations(1).time_ns(), 130);
  EXPECT_EQ(rl.iterations(2).time_ns(), 120);
  // The lower median of 130 and 120.
  EXPECT_EQ(rl.iteration_time_ns(), 120);
  // Window 1 [230, 360): rollout cards run rollout 2 (100) and sync 1
  // (10); training cards log-prob 1, update 1, sync 1 (130).
  EXPECT_EQ(rl.iterations(1).busy_card_ns(), 480);
  // Window 0: rollouts 0 and 1 and sync 0 (210 each), training 130 each.
  EXPECT_EQ(rl.iterations(0).busy_card_ns(), 680);
  EXPECT_EQ(rl.iterations(2).busy_card_ns(), 260);
  EXPECT_EQ(rl.utilization(), 1420.0 / 1920.0);
  for (const auto& it : rl.iterations()) {
    EXPECT_EQ(it.long_tail_idle_card_ns(), 0);
    EXPECT_EQ(it.switch_ns(), 10);
    EXPECT_FALSE(it.has_generated_tokens());
    EXPECT_FALSE(it.has_trained_tokens());
  }
  EXPECT_FALSE(rl.has_generated_tokens_per_s());
  // The rollout of iteration 1 is in iteration 1's phases, not the window's.
  EXPECT_EQ(rl.iterations(1).phases(0).task(), "generate_sequences");
  EXPECT_EQ(rl.iterations(1).phases(0).start_ns(), 100);
}

// The producer's weight versions raise the staleness the ranges show (never
// lower it): colocated ranges show 0 for every iteration.
TEST(RlSection, StalenessAttributeRaisesTheRangesFigure) {
  Trace t = traces::Colocated();
  t.metadata.attributes.push_back({"rl.staleness.0", "1"});
  const analysis::Analysis a = AnalyzeTrace(std::move(t));
  EXPECT_EQ(a.rl().iterations(0).staleness(), 1);
  EXPECT_EQ(a.rl().staleness(), 1);
  Trace s = traces::Separate();
  s.metadata.attributes.push_back({"rl.staleness.1", "0"});
  const analysis::Analysis b = AnalyzeTrace(std::move(s));
  EXPECT_EQ(b.rl().iterations(1).staleness(), 1);
}

// No RL phase: no `rl` key in the document.
TEST(RlSection, AbsentWithoutPhases) {
  Trace t;
  t.metadata.source = "tracegen";
  t.ranks.resize(1);
  traces::Range(&t.ranks[0], "my_marker", 0, 10);
  const analysis::Analysis a = AnalyzeTrace(std::move(t));
  EXPECT_FALSE(a.has_rl());
  EXPECT_EQ(ToStableJson(a).find("\"rl\""), std::string::npos);
}

// A plain FSDP2 training trace (Kineto): its reshard annotations are no RL.
TEST(RlSection, AbsentForFsdpTraining) {
  Trace t;
  t.metadata.source = "kineto";
  t.ranks.push_back(ImportKinetoJson(R"J({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 1250},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::pre_forward (layers.0)", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::post_backward_reshard (layers.0)", "pid": 1, "tid": 1, "ts": 500, "dur": 200},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::post_backward_reshard (layers.1)", "pid": 1, "tid": 1, "ts": 800, "dur": 200}
  ]})J"));
  const analysis::Analysis a = AnalyzeTrace(std::move(t));
  EXPECT_FALSE(a.has_rl());
  EXPECT_EQ(ToStableJson(a).find("\"rl\""), std::string::npos);
}

// Separate pools recorded without steps: each update is in the iteration
// of the rollout wave before it (not all in iteration 0), so no staleness.
TEST(RlSection, SeparatePoolsWithoutSteps) {
  Trace t;
  t.metadata.source = "kineto";
  t.ranks.resize(2);
  for (int i = 0; i < 3; ++i) {
    traces::Range(&t.ranks[0], "generate_sequences", 1000 + 1000 * i, 1400 + 1000 * i, kNone,
                  Category::kHostOp);
    traces::Range(&t.ranks[1], "update_actor", 1500 + 1000 * i, 1900 + 1000 * i, kNone,
                  Category::kHostOp);
  }
  t.ranks[1].rank = 1;
  const analysis::Rl rl = AnalyzeTrace(std::move(t)).rl();
  EXPECT_EQ(rl.placement(), "separate");
  ASSERT_EQ(rl.iterations_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const analysis::RlIteration& it = rl.iterations(i);
    EXPECT_EQ(it.iteration(), i);
    EXPECT_EQ(it.start_ns(), i == 0 ? 1000 : 900 + 1000 * i);
    EXPECT_EQ(it.time_ns(), i == 0 ? 900 : 1000);
    ASSERT_EQ(it.phases_size(), 2);
    EXPECT_EQ(it.phases(1).task(), "update_actor");
    EXPECT_EQ(it.phases(1).start_ns(), 1500 + 1000 * i);
    EXPECT_EQ(it.staleness(), 0);
  }
  EXPECT_EQ(rl.staleness(), 0);
}

}  // namespace
}  // namespace moetrace::rl
