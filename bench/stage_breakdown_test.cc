#include "bench/stage_breakdown.h"

#include <gtest/gtest.h>

namespace moetrace::bench {
namespace {

TEST(StageBreakdown, EachInstantGoesToTheFirstPartCoveringIt) {
  // Step [0, 100): compute 10-30 and 50-60; an all-to-all 20-45 (masked
  // 20-30, exposed 30-45); a migration 0-8 under a PP receive 0-50 (the
  // migration wins 0-8, the PP wait keeps 8-10 and 45-50); a swap-in 55-70
  // (masked to 60); nothing 70-100.
  auto p = PartitionStep({{10, 30, kPartCompute},
                          {50, 60, kPartCompute},
                          {20, 45, kPartEp},
                          {0, 8, kPartMigration},
                          {0, 50, kPartPp},
                          {55, 70, kPartSwap},
                          {120, 130, kPartTp}},  // outside the step
                         0, 100);
  EXPECT_EQ(p[kPartCompute], 30);
  EXPECT_EQ(p[kPartMigration], 8);
  EXPECT_EQ(p[kPartEp], 15);
  EXPECT_EQ(p[kPartPp], 7);
  EXPECT_EQ(p[kPartSwap], 10);
  EXPECT_EQ(p[kPartTp], 0);
  EXPECT_EQ(p[kPartIdle], 30);
  int64_t sum = 0;
  for (int64_t v : p) sum += v;
  EXPECT_EQ(sum, 100);
}

TEST(StageBreakdown, OverlappingComputeCountsOnce) {
  auto p = PartitionStep({{0, 40, kPartCompute}, {10, 50, kPartCompute}, {45, 60, kPartDp}}, 0, 60);
  EXPECT_EQ(p[kPartCompute], 50);
  EXPECT_EQ(p[kPartDp], 10);
  EXPECT_EQ(p[kPartIdle], 0);
}

}  // namespace
}  // namespace moetrace::bench
