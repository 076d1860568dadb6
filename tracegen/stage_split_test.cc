#include "tracegen/stage_split.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace moetrace::tracegen {
namespace {

TEST(StageSplit, LastStageHeadMovesLayersForward) {
  // 4 equal layers on 2 stages, the LM head costing 2 layers: even 2+2
  // gives stage costs 2 and 4; 3+1 gives 3 and 3.
  EXPECT_EQ(BalancedSplit({1, 1, 1, 1}, 0, 2, 2, 2), (std::vector<int>{3, 1}));
}

TEST(StageSplit, HeavyDenseLayersGetFewerPerStage) {
  // Two dense layers twice as heavy as the MoE ones (no VPP): even 2+2+2
  // costs 4,2,2; the balanced 1+2+3 costs 2,3,3 (reached by moving a layer
  // from the first stage to the last, shifting both boundaries).
  EXPECT_EQ(BalancedSplit({2, 2, 1, 1, 1, 1}, 0, 0, 3, 3), (std::vector<int>{1, 2, 3}));
}

TEST(StageSplit, VppBalancesRanksNotOnlySlices) {
  // 8 equal layers, 4 slices on 2 ranks (rank 0: slices 0, 2; rank 1:
  // slices 1, 3), head = 2 layers on slice 3. Even: ranks 4 and 6. The split
  // gives both ranks 5 (slices 3,2 | 2,1+2), the largest slice 3.
  EXPECT_EQ(BalancedSplit({1, 1, 1, 1, 1, 1, 1, 1}, 0, 2, 4, 2), (std::vector<int>{3, 2, 2, 1}));
}

TEST(StageSplit, LastStageMayHoldOnlyTheHead) {
  // 3 layers, the head + MTP costing 3: 2+1 costs 2,4; 3+0 costs 3,3.
  EXPECT_EQ(BalancedSplit({1, 1, 1}, 0, 3, 2, 2), (std::vector<int>{3, 0}));
  // Without work of its own the last stage keeps a layer.
  EXPECT_EQ(BalancedSplit({3, 1, 1}, 0, 0, 2, 2), (std::vector<int>{1, 2}));
}

TEST(StageSplit, BalancedInputKeepsTheEvenSplit) {
  EXPECT_EQ(BalancedSplit({1, 1, 1, 1, 1, 1}, 0, 0, 3, 3), (std::vector<int>{2, 2, 2}));
  // Fewer layers than slices: no split (the caller keeps its own).
  EXPECT_TRUE(BalancedSplit({1, 1}, 0, 0, 3, 3).empty());
}

TEST(StageSplit, SkewedLayerCostsMoveTheBoundary) {
  // 4 MoE layers on 2 stages. Under balanced routing every layer costs 1:
  // 2+2 (stages 2 and 2). With the predicted loads after migration the last
  // layer's most loaded EP rank makes it cost 3: 2+2 would cost 2 and 4,
  // 3+1 costs 3 and 3.
  EXPECT_EQ(BalancedSplit({1, 1, 1, 1}, 0, 0, 2, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(BalancedSplit({1, 1, 1, 3}, 0, 0, 2, 2), (std::vector<int>{3, 1}));
  EXPECT_EQ(SplitScore({1, 1, 1, 3}, 0, 0, {2, 2}, 2), (std::array<double, 4>{4, 4, 20, 20}));
  EXPECT_EQ(SplitScore({1, 1, 1, 3}, 0, 0, {3, 1}, 2), (std::array<double, 4>{3, 3, 18, 18}));
}

TEST(StageSplit, SkewedCostsUnderVppPickOtherRanks) {
  // 8 layers, 4 slices on 2 ranks (rank 0: slices 0, 2; rank 1: 1, 3), the
  // head 2 on slice 3. Under balanced routing: 3,2,2,1 (ranks 5 and 5,
  // VppBalancesRanksNotOnlySlices). With layers 2 and 5 twice as heavy
  // after migration that split costs rank 0 4 + 3 = 7 (rank 1 2 + 3 = 5);
  // the skew-aware split 2,2,3,1 costs 2 + 4 and 3 + 3: 6 and 6.
  const std::vector<double> skewed = {1, 1, 2, 1, 1, 2, 1, 1};
  EXPECT_EQ(BalancedSplit(std::vector<double>(8, 1.0), 0, 2, 4, 2), (std::vector<int>{3, 2, 2, 1}));
  EXPECT_EQ(SplitScore(skewed, 0, 2, {3, 2, 2, 1}, 2), (std::array<double, 4>{7, 4, 74, 38}));
  EXPECT_EQ(BalancedSplit(skewed, 0, 2, 4, 2), (std::vector<int>{2, 2, 3, 1}));
  EXPECT_EQ(SplitScore(skewed, 0, 2, {2, 2, 3, 1}, 2), (std::array<double, 4>{6, 4, 72, 38}));
}

TEST(StageSplit, NeverWorseThanTheBaseline) {
  // Here the search from the even split stops at 3,2,2,1 (most loaded rank
  // 10: 1+1+3 + 2+3 | 3+1 + 3+1), a local optimum; the baseline 1,4,3,0
  // (rank 0 1 + 2+3+3 = 9, rank 1 1+3+3+1 + 1 = 9) is better and kept.
  const std::vector<double> cost = {1, 1, 3, 3, 1, 2, 3, 3};
  EXPECT_EQ(BalancedSplit(cost, 0, 1, 4, 2), (std::vector<int>{3, 2, 2, 1}));
  EXPECT_EQ(SplitScore(cost, 0, 1, {3, 2, 2, 1}, 2)[0], 10);
  EXPECT_EQ(BalancedSplit(cost, 0, 1, 4, 2, {1, 4, 3, 0}), (std::vector<int>{1, 4, 3, 0}));
  EXPECT_EQ(SplitScore(cost, 0, 1, {1, 4, 3, 0}, 2)[0], 9);
}

TEST(StageSplit, BaselineKeptUnlessStrictlyBeaten) {
  // 6 equal layers, 4 slices on 2 ranks: the even split's end 1,2,2,1 and
  // the baseline 2,1,1,2 tie on every key (ranks 3 and 3, slices 2,1,1,2
  // in another order): the baseline (the padding the split replaces) stays.
  const std::vector<double> six(6, 1.0);
  EXPECT_EQ(BalancedSplit(six, 0, 0, 4, 2), (std::vector<int>{1, 2, 2, 1}));
  EXPECT_EQ(BalancedSplit(six, 0, 0, 4, 2, {2, 1, 1, 2}), (std::vector<int>{2, 1, 1, 2}));
  // A worse baseline is improved on: 4,0 with the head 1 (stages 4 and 1)
  // moves one layer on to 3,1 (3 and 2), which ties with the even 2,2
  // (2 and 3), so the baseline's end stays.
  EXPECT_EQ(BalancedSplit({1, 1, 1, 1}, 0, 1, 2, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(BalancedSplit({1, 1, 1, 1}, 0, 1, 2, 2, {4, 0}), (std::vector<int>{3, 1}));
  // A baseline of another shape is ignored.
  EXPECT_EQ(BalancedSplit({1, 1, 1, 3}, 0, 0, 2, 2, {1, 1, 2}), (std::vector<int>{3, 1}));
}

}  // namespace
}  // namespace moetrace::tracegen
