#include "bench/expert_bound.h"

#include <gtest/gtest.h>

namespace moetrace::bench {
namespace {

// Dyadic popularities: every sum below is exact in binary.
TEST(ExpertBound, HottestExpertPlusColdestAboveTheMean) {
  // 4 experts on 2 positions, 2 each: the hottest (0.5) goes with the
  // coldest (0.125): 0.625 of a total 1, over the mean 0.5 = 1.25.
  EXPECT_EQ(WholeExpertBound({0.5, 0.25, 0.125, 0.125}, 2), 1.25);
  // Unsorted input, same answer.
  EXPECT_EQ(WholeExpertBound({0.125, 0.25, 0.5, 0.125}, 2), 1.25);
}

TEST(ExpertBound, BalanceableLayerIsOne) {
  // 0.3125 + 0.125 = 0.4375 < the mean 0.5: the bound does not bind.
  EXPECT_EQ(WholeExpertBound({0.3125, 0.3125, 0.25, 0.125}, 2), 1.0);
  // One expert per position: the hottest alone, 0.375 x 4 = 1.5.
  EXPECT_EQ(WholeExpertBound({0.375, 0.25, 0.25, 0.125}, 4), 1.5);
}

TEST(ExpertBound, RankLoadsOverTheMean) {
  // Position 0 holds experts 0 and 3 (0.625), position 1 experts 1 and 2 (0.375).
  const std::vector<double> l = RelativeRankLoads({0.5, 0.25, 0.125, 0.125}, {0, 1, 1, 0}, 2);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0], 1.25);
  EXPECT_EQ(l[1], 0.75);
}

TEST(ExpertBound, MaxLoadWithACopySplitsItsExpert) {
  // Experts {0, 3} | {1, 2}; a copy of expert 0 on position 1 takes half of
  // its 0.5: 0.25 + 0.125 | 0.25 + 0.125 + 0.25 = 0.625 over the mean 0.5.
  tracegen::ExpertCopies c;
  c.expert = {0};
  c.position = {1};
  EXPECT_EQ(MaxLoadWithCopies({0.5, 0.25, 0.125, 0.125}, {0, 1, 1, 0}, c, 2), 1.25);
  // No copies: the plain maximum, 0.625 / 0.5.
  EXPECT_EQ(MaxLoadWithCopies({0.5, 0.25, 0.125, 0.125}, {0, 1, 1, 0}, {}, 2), 1.25);
  // Experts {0, 1} | {2, 3} (0.75 | 0.25) and the copy on position 1:
  // 0.25 + 0.25 | 0.125 + 0.125 + 0.25 = 0.5 | 0.5, balanced.
  EXPECT_EQ(MaxLoadWithCopies({0.5, 0.25, 0.125, 0.125}, {0, 0, 1, 1}, c, 2), 1.0);
}

}  // namespace
}  // namespace moetrace::bench
