// The ground truth's step windows on a hand-built rank (the analyzer's
// rank_metrics_test has the same rank): work of no step between two steps
// ends the earlier step's window at its own last op.
#include "tracegen/labels.h"

#include <gtest/gtest.h>

#include <map>

namespace moetrace::tracegen {
namespace {

void Add(Rank& r, size_t track, Category cat, TimeNs ts, TimeNs dur, int32_t step) {
  Event e;
  e.ts = ts;
  e.dur = dur;
  e.category = cat;
  e.step = step;
  r.tracks[track].events.Append(e);
}

// Steps 0 and 1 of an actor update; with `rollout`, the next iteration's
// rollout (no step) in [800, 1400).
Rank Card(bool rollout) {
  Rank r;
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "compute");
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "hccl");
  Add(r, 0, Category::kCompute, 100, 150, 0);
  Add(r, 1, Category::kCollective, 200, 100, 0);
  if (rollout) Add(r, 0, Category::kCompute, 800, 600, kNone);
  Add(r, 0, Category::kCompute, 2000, 100, 1);
  return r;
}

TEST(Labels, WorkOfNoStepBetweenStepsEndsTheWindowEarly) {
  const std::vector<StepBreakdown> s = ComputeBreakdown(Card(true));
  ASSERT_EQ(s.size(), 2u);  // the stepless work is no step of its own
  EXPECT_EQ(s[0].step, 0);
  EXPECT_EQ(s[0].span, 200);  // [100, 300)
  EXPECT_EQ(s[0].compute, 150);
  EXPECT_EQ(s[0].comm_exposed, 50);
  EXPECT_EQ(s[0].free, 0);
  EXPECT_EQ(s[1].step, 1);
  EXPECT_EQ(s[1].span, 100);
  // Idle time between steps stays in the earlier step, as METRICS.md has it.
  const std::vector<StepBreakdown> idle = ComputeBreakdown(Card(false));
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0].span, 1900);
  EXPECT_EQ(idle[0].free, 1700);
}

TEST(Labels, RankWithNoStepHasNoStepLabel) {
  Rank r;
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "compute");
  Add(r, 0, Category::kCompute, 800, 600, kNone);
  EXPECT_TRUE(GroundTruthLabels(r).empty());
  // The sum over steps (step -1) and each step's: one step here.
  const std::vector<LabeledValue> one = GroundTruthLabels(Card(false));
  int spans = 0;
  for (const LabeledValue& l : one) spans += l.key == "breakdown.span_ns";
  EXPECT_EQ(spans, 3);
}

// A rank's memory peak (step -1) is the whole trace's, as the analyzer
// reads it; each step's is its window's. Here the rollout between the steps
// (outside every window) holds more than either step.
TEST(Labels, RankPeakCoversMemoryOutsideTheSteps) {
  Rank r = Card(true);
  Track& alloc = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "memory.allocated");
  alloc.counter = CounterKind::kMemAllocated;
  alloc.sample_ts = {100, 800, 1400, 2000};
  alloc.sample_value = {40, 55, 0, 30};
  std::map<int32_t, double> peak;
  for (const LabeledValue& l : GroundTruthLabels(r))
    if (l.key == "memory.peak_allocated_bytes") peak[l.step] = l.value;
  EXPECT_EQ(peak, (std::map<int32_t, double>{{-1, 55}, {0, 40}, {1, 30}}));
}

}  // namespace
}  // namespace moetrace::tracegen
