#include "tracegen/stage_split.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace moetrace::tracegen
