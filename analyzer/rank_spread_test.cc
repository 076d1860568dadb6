#include "analyzer/rank_spread.h"

#include <gtest/gtest.h>

#include <cmath>

namespace moetrace {
namespace {

// A rank that lacks a figure (an unreadable cell of the profiler's CSV) is
// left out of that metric's mean, not taken as 0 and flagged slow.
TEST(FlagSlowRanks, AMissingFigureIsLeftOut) {
  const double missing = std::nan("");
  google::protobuf::RepeatedPtrField<analysis::SlowRank> out;
  FlagSlowRanks({"compute_ns"}, {{0, {missing}}, {1, {100}}, {2, {100}}, {3, {100}}, {4, {100}}, {5, {125}}},
                &out);
  ASSERT_EQ(out.size(), 1);  // 100 is 4.8% under the mean: not flagged
  EXPECT_EQ(out[0].rank(), 5);
  EXPECT_DOUBLE_EQ(out[0].mean(), 105.0);  // (4 x 100 + 125) / 5
  EXPECT_DOUBLE_EQ(out[0].deviation(), 20.0 / 105.0);
  out.Clear();
  FlagSlowRanks({"compute_ns"}, {{0, {missing}}, {1, {100}}}, &out);  // one rank has it
  EXPECT_EQ(out.size(), 0);
}

}  // namespace
}  // namespace moetrace
