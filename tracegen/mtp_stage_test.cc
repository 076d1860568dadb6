#include "tracegen/mtp_stage.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moetrace::tracegen {
namespace {

TEST(MtpStage, MegatronsRulesOnPp16Vpp2) {
  // 32 slices, slice s on rank s % 16: 31 is the loss stage's, 30 rank
  // 14's second chunk (Megatron's "Et*3|(tt|)*29,m|L").
  EXPECT_EQ(MtpStageError(31, 32, 16), "");
  EXPECT_EQ(MtpStageError(30, 32, 16), "");
  EXPECT_EQ(MtpStageError(30, 32, 16, std::vector<int>(30, 2)), "");  // sizes differ: not checked
  std::vector<int> padded(32, 2);
  padded[30] = 1;
  padded[31] = 0;
  EXPECT_EQ(MtpStageError(30, 32, 16, padded), "");
  padded[30] = 0;
  padded[31] = 1;
  EXPECT_NE(MtpStageError(30, 32, 16, padded).find("the last stage holds 1 decoder layer(s)"), std::string::npos);
  // Rank 14's first chunk: not the last virtual stage of its rank.
  EXPECT_NE(MtpStageError(14, 32, 16).find("not in the last virtual chunk (stages 16..31)"), std::string::npos);
  EXPECT_NE(MtpStageError(16, 32, 16).find("first pipeline rank"), std::string::npos);
  EXPECT_NE(MtpStageError(29, 32, 16).find("only the last stage (31) or the one before it (30)"), std::string::npos);
  EXPECT_NE(MtpStageError(32, 32, 16).find("0..31 (got 32)"), std::string::npos);
  EXPECT_EQ(MtpStageCandidates(32, 16), (std::vector<int>{31, 30}));
}

TEST(MtpStage, CandidatesSkipTheFirstRank) {
  // PP 2: the slice before the last is on rank 0.
  EXPECT_EQ(MtpStageCandidates(2, 2), (std::vector<int>{1}));
  EXPECT_EQ(MtpStageCandidates(4, 2), (std::vector<int>{3}));
  EXPECT_EQ(MtpStageCandidates(4, 4), (std::vector<int>{3, 2}));
  EXPECT_EQ(MtpStageCandidates(1, 1), (std::vector<int>{0}));
}

}  // namespace
}  // namespace moetrace::tracegen
