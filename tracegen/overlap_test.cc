#include "tracegen/overlap.h"

#include <gtest/gtest.h>

namespace moetrace::tracegen {
namespace {

TEST(Overlap, AlternatesSegmentsEndingAtAllToAlls) {
  // chain 0: a0 a1* a2 a3*   chain 1: b0* b1 b2* b3   (* = all-to-all)
  std::vector<OverlapOp> ops = {{0, false}, {0, true}, {0, false}, {0, true},
                                {1, true},  {1, false}, {1, true}, {1, false}};
  EXPECT_EQ(AlternateSegments(ops, 1), (std::vector<int32_t>{4, 0, 1, 5, 6, 2, 3, 7}));
  EXPECT_EQ(AlternateSegments(ops, 0), (std::vector<int32_t>{0, 1, 4, 2, 3, 5, 6, 7}));
}

TEST(Overlap, LongerChainFinishesAlone) {
  std::vector<OverlapOp> ops = {{0, true}, {1, false}, {1, true}, {1, true}, {1, false}};
  EXPECT_EQ(AlternateSegments(ops, 0), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace moetrace::tracegen
