#include "analyzer/advise/effect_text.h"

#include <gtest/gtest.h>

namespace moetrace::advise {
namespace {

// The skew-1 tiny-moe proposals of issue #15, with the numbers replay gives.
Proposal Predicted(std::string rule, std::string fixes, double gain, double before, double after) {
  Proposal p;
  p.rule = std::move(rule);
  p.fixes = std::move(fixes);
  p.predicted = true;
  p.gain = gain;
  p.fixes_before = before;
  p.fixes_after = after;
  return p;
}

TEST(EffectText, ComputedFromThePrediction) {
  const Proposal overlap =
      Predicted("exposed_ep_comm", "cluster.comm_by_class.EP.unmasked_fraction", 0.1218, 0.8454, 0.541);
  EXPECT_EQ(EffectText(overlap), "unmasked EP comm 84.5 % -> 54.1 % (-36 %)");
  EXPECT_EQ(DropReason(overlap), "");
  // "halved" only when it halves.
  const Proposal half = Predicted("bubble", "cluster.ratios.bubble", 0.05, 0.40, 0.20);
  EXPECT_EQ(EffectText(half), "bubble halved: 40.0 % -> 20.0 % (-50 %)");
  const Proposal almost = Predicted("bubble", "cluster.ratios.bubble", 0.05, 0.40, 0.201);
  EXPECT_EQ(EffectText(almost), "bubble 40.0 % -> 20.1 % (-50 %)");
  EXPECT_EQ(EffectText(Proposal()), "");
  // The layout rule fixes the step itself: nothing to add to the step line.
  Proposal layout = Predicted("layout", "cluster.step_time_ns.max", 0.317, 13821000, 9434000);
  layout.step_before_ns = 13821000;
  layout.step_after_ns = 9434000;
  EXPECT_EQ(EffectText(layout), "");
  // The bubble rule on tiny-moe: the slowest step 13.859 -> 13.646 ms
  // (-1.54 %) beside a step of -1.5 %: nothing new either.
  Proposal bubble = Predicted("bubble", "cluster.step_time_ns.max", 0.01539, 13859078, 13646139);
  EXPECT_EQ(EffectText(bubble), "");
  // A slow rank's fix: the slowest step, not the step the gain is of.
  Proposal slow = Predicted("slow_rank", "cluster.step_time_ns.max", 0.02, 14000000, 13000000);
  slow.step_before_ns = 13500000;
  slow.step_after_ns = 13230000;
  EXPECT_EQ(EffectText(slow), "slowest rank's step 14.000 ms -> 13.000 ms (-7 %)");
}

TEST(EffectText, DroppedWhenItsOwnMetricDoesNotGoDown) {
  // Issue #15: "halve the bubble" for 0.3889 -> 0.4442, with a 1.4% step gain.
  const Proposal bubble = Predicted("bubble", "cluster.ratios.bubble", 0.014, 0.3889, 0.4442);
  EXPECT_FALSE(ImprovesItsMetric(bubble));
  EXPECT_EQ(DropReason(bubble), "bubble 38.9 % -> 44.4 %: the plan does not lower its own metric");
  // Skew 2: EP MaxVio 1.47 -> 1.46 is under 1% of its value.
  const Proposal experts =
      Predicted("expert_imbalance", "cluster.expert_imbalance.ep_max_vio_mean", 0.01, 1.4716, 1.4578);
  EXPECT_EQ(DropReason(experts), "EP MaxVio 1.47 -> 1.46: the plan does not lower its own metric");
  // Lowers its metric but not the step (as printed).
  const Proposal slower = Predicted("bubble", "cluster.ratios.bubble", 0.0004, 0.40, 0.30);
  EXPECT_EQ(DropReason(slower), "step time -0.0 %: no gain");
  // A memory fix may cost time; it must save 5% of the peak.
  Proposal memory = Predicted("memory_pressure", "cluster.memory.peak_bytes", -0.03, 0, 0);
  memory.peak_before_bytes = int64_t(1) << 30;
  memory.peak_after_bytes = 1000000000;  // 6.9% less
  EXPECT_EQ(DropReason(memory), "");
  EXPECT_EQ(EffectText(memory), "peak memory 1.00 GiB -> 0.93 GiB (-7 %)");
  memory.peak_after_bytes = 1030000000;  // 4.1% less
  EXPECT_EQ(DropReason(memory), "peak memory 1.00 GiB -> 0.96 GiB: saves less than 5 %");
}

TEST(EffectText, MetricsForPeople) {
  EXPECT_EQ(MetricLabel("cluster.ratios.bubble"), "bubble");
  EXPECT_EQ(MetricLabel("cluster.some.other"), "cluster.some.other");
  EXPECT_EQ(MetricValue("cluster.breakdown.host_bound_dispatch_ns", 12345678), "12.346 ms");
  EXPECT_EQ(MetricValue("cluster.breakdown.host_bound_dispatch_ns", 2.5e10), "25.0 s");
  EXPECT_EQ(MetricValue("cluster.step_time_ns.max", 137707000), "137.707 ms");
  EXPECT_EQ(MetricValue("cluster.expert_imbalance.ep_max_vio_mean", 0.7142), "0.71");
}

}  // namespace
}  // namespace moetrace::advise
