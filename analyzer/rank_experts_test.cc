#include "analyzer/rank_experts.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

TEST(CopyLoads, SumsTokensPerExpertAndRankInFirstSeenOrder) {
  CopyLoads c;
  c.Add(3, 1, 10);
  c.Add(5, 0, 4);
  c.Add(3, 1, 7);
  c.Add(3, 0, 2);
  EXPECT_EQ(c.expert, (std::vector<int32_t>{3, 5, 3}));
  EXPECT_EQ(c.ep_rank, (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(c.tokens, (std::vector<int64_t>{17, 4, 2}));
}

TEST(EpLoads, CopiesMoveTokensAndAnOddEpSizeIsBoundedByTheExperts) {
  // 4 experts on 2 EP ranks (contiguous); expert 0's copy on rank 1 took 6.
  CopyLoads c;
  c.Add(0, 1, 6);
  EXPECT_EQ(EpLoads({10, 2, 3, 1}, {}, 2, c), (std::vector<double>{6, 10}));
  // An EP size from a file far beyond the 4 experts: one slot per expert, not 2^31.
  EXPECT_EQ(EpLoads({10, 2, 3, 1}, {}, 2147483647, CopyLoads{}).size(), 4u);
}

}  // namespace
}  // namespace moetrace
