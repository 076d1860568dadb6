#include "analyzer/summary.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

analysis::SlowRank* AddSlow(analysis::Cluster* c, int32_t rank, const char* metric, double value,
                            double mean) {
  analysis::SlowRank* s = c->add_slow_ranks();
  s->set_rank(rank);
  s->set_metric(metric);
  s->set_value(value);
  s->set_mean(mean);
  s->set_deviation((value - mean) / mean);
  return s;
}

TEST(Summary, OutliersWorthLessThanOnePercentOfTheStepAreOnlyCounted) {
  analysis::Analysis a;
  analysis::Cluster* c = a.mutable_cluster();
  c->set_rank_count(16);
  c->mutable_step_time_ns()->set_median(10'000'000);  // 10 ms
  // Free time 70% above a 0.04 ms mean: 0.028 ms, 0.28% of the step.
  AddSlow(c, 3, "free_ns", 68'000, 40'000);
  // Compute 8% above a 5 ms mean: 0.4 ms, 4% of the step.
  AddSlow(c, 37, "compute_ns", 5'400'000, 5'000'000);
  // Comm 6% below a 3 ms mean: 0.18 ms, 1.8% of the step.
  AddSlow(c, 12, "comm_ns", 2'820'000, 3'000'000);
  const std::string s = FormatSummary(a);
  const size_t header = s.find("outlier ranks (more than 5% from the mean and at least 1% of the step):\n");
  ASSERT_NE(header, std::string::npos) << s;
  const size_t r37 = s.find("  rank 37     compute_ns  +8.0 %  (5.400 ms vs mean 5.000 ms per step)\n");
  const size_t r12 = s.find("  rank 12     comm_ns     -6.0 %  (2.820 ms vs mean 3.000 ms per step)\n");
  ASSERT_NE(r37, std::string::npos) << s;
  ASSERT_NE(r12, std::string::npos) << s;
  EXPECT_LT(r37, r12);  // the larger absolute deviation first
  EXPECT_EQ(s.find("rank 3 "), std::string::npos) << s;
  EXPECT_NE(s.find("  1 smaller deviation (under 1% of the step): cluster.slow_ranks in --json\n"),
            std::string::npos)
      << s;
}

TEST(Summary, RanksWithTheSameDeviationShareALine) {
  analysis::Analysis a;
  analysis::Cluster* c = a.mutable_cluster();
  c->mutable_step_time_ns()->set_median(14'000'000);
  // Two pipeline stages: ranks 0-3 and 6 light, 8-11 heavy; rank 5 apart.
  for (int32_t r : {0, 1, 2, 3, 6}) AddSlow(c, r, "compute_ns", 4'000'000 + 10'000 * r, 7'000'000);
  for (int32_t r : {8, 9, 10, 11}) AddSlow(c, r, "compute_ns", 10'000'000, 7'000'000);
  AddSlow(c, 5, "compute_ns", 6'000'000, 7'000'000);
  const std::string s = FormatSummary(a);
  // 4.00 .. 4.06 ms: -42.9 .. -42.0 %, 4.024 ms on average.
  const size_t light = s.find("  ranks 0-3,6 compute_ns  -42.9..-42.0 %  (4.024 ms vs mean 7.000 ms per step)\n");
  const size_t heavy = s.find("  ranks 8-11  compute_ns  +42.9 %  (10.000 ms vs mean 7.000 ms per step)\n");
  const size_t apart = s.find("  rank 5      compute_ns  -14.3 %  (6.000 ms vs mean 7.000 ms per step)\n");
  ASSERT_NE(light, std::string::npos) << s;
  ASSERT_NE(heavy, std::string::npos) << s;
  ASSERT_NE(apart, std::string::npos) << s;
  EXPECT_LT(heavy, light);  // 3 ms from the mean before 2.976 ms
  EXPECT_LT(light, apart);
}

TEST(Summary, NoOutlierSectionWithoutSlowRanks) {
  analysis::Analysis a;
  a.mutable_cluster()->set_rank_count(2);
  EXPECT_EQ(FormatSummary(a).find("outlier ranks"), std::string::npos);
}

}  // namespace
}  // namespace moetrace
