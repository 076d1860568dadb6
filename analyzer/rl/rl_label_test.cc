// Job-level RL labels (rank -1, step = iteration) checked against `rl`.
#include "analyzer/rl/rl_label.h"

#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "analyzer/rl/rl_test_trace.h"
#include "formats/trace_io.h"

namespace moetrace::rl {
namespace {

TEST(RlLabel, JobLevelLabelsAreChecked) {
  Trace t = traces::Colocated();
  t.metadata.ground_truth = {
      {kNone, 0, "time_ns", 190},
      {kNone, 0, "phases.generate_sequences.time_ns", 95},
      {kNone, 0, "phases.update_actor.card_ns", 210},
      {kNone, 1, "long_tail_idle_card_ns", 10},
      {kNone, 1, "busy_card_ns", 500},
      {kNone, 1, "switch_ns", 20},
      {kNone, 1, "generated_tokens", 1100},
      {kNone, 1, "staleness", 0},
      {kNone, 1, "phases.compute_rm_score.time_ns", 5},  // no such phase
      {kNone, 2, "time_ns", 5},                          // no such iteration
  };
  MemorySource src(std::move(t));
  const analysis::Analysis a = Analyze(src);
  ASSERT_EQ(a.label_checks_size(), 10);
  auto check = [&](int k, double actual, double error) {
    const analysis::LabelCheck& c = a.label_checks(k);
    EXPECT_EQ(c.rank(), -1) << k;
    ASSERT_TRUE(c.has_actual()) << k;
    EXPECT_EQ(c.actual(), actual) << k;
    ASSERT_TRUE(c.has_error()) << k;
    EXPECT_EQ(c.error(), error) << k;
  };
  check(0, 190, 0);
  check(1, 100, 5.0 / 190.0);  // a time: over the iteration
  check(2, 200, 10.0 / (4.0 * 190.0));  // a card-time: over cards x the iteration
  check(3, 10, 0);
  check(4, 540, 40.0 / (4.0 * 200.0));
  check(5, 20, 0);
  check(6, 1000, 100.0 / 1100.0);  // a count: over the expected value
  EXPECT_EQ(a.label_checks(7).actual(), 0);
  EXPECT_FALSE(a.label_checks(7).has_error());  // 0 expected: no relative error
  EXPECT_FALSE(a.label_checks(8).has_actual());
  EXPECT_FALSE(a.label_checks(9).has_actual());
  EXPECT_EQ(a.label_checks(9).step(), 2);
}

}  // namespace
}  // namespace moetrace::rl
