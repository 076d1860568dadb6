#include "tracegen/noop_layers.h"

#include <gtest/gtest.h>

namespace moetrace::tracegen {
namespace {

std::vector<int> Split(int layers, std::string_view noop, int slices) {
  std::vector<int> idx;
  std::string error;
  EXPECT_TRUE(ParseNoopLayers(noop, &idx, &error)) << error;
  std::vector<int> counts = NoopPaddedSplit(layers, idx, slices, &error);
  EXPECT_FALSE(counts.empty()) << error;
  return counts;
}

TEST(NoopLayers, MindSpeedDeepSeekRecipeOnPp16Vpp2) {
  // Pangu Ultra MoE / DeepSeek-V3: 61 layers padded to 64 with MindSpeed-LLM's
  // --noop-layers 61,62,63, 2 layers per virtual stage on PP 16 x VPP 2:
  // slice 30 keeps layer 60, slice 31 (pipeline rank 15) none - it holds
  // only the LM head (and the MTP module).
  std::vector<int> want(32, 2);
  want[30] = 1;
  want[31] = 0;
  EXPECT_EQ(Split(61, "61,62,63", 32), want);
  // The recipe's VPP variant 47,62,63: layer 47 sits in slice 23 (rank 7).
  want[30] = 2;
  want[23] = 1;
  EXPECT_EQ(Split(61, "47,62,63", 32), want);
}

TEST(NoopLayers, PpEightWithoutVpp) {
  // The recipe's own layout: PP 8, 8 padded layers per stage, the last
  // stage 5 real layers.
  EXPECT_EQ(Split(61, "61,62,63", 8), (std::vector<int>{8, 8, 8, 8, 8, 8, 8, 5}));
  // No noop layers: the plain even split.
  EXPECT_EQ(Split(6, "", 3), (std::vector<int>{2, 2, 2}));
}

TEST(NoopLayers, BadInputIsRefusedWithAReason) {
  std::vector<int> idx;
  std::string error;
  EXPECT_FALSE(ParseNoopLayers("61,x", &idx, &error));
  EXPECT_EQ(error, "'x' is not a layer index >= 0 (expected e.g. 61,62,63)");
  EXPECT_FALSE(ParseNoopLayers("3,3", &idx, &error));
  EXPECT_EQ(error, "layer 3 is listed twice");
  // A repeat far from its first listing (found by sorting), the smallest named.
  EXPECT_FALSE(ParseNoopLayers("9,4,7,1,4,9", &idx, &error));
  EXPECT_EQ(error, "layer 4 is listed twice");
  // A stray comma anywhere is an empty entry, not the end of the list.
  EXPECT_FALSE(ParseNoopLayers("4,5,", &idx, &error));
  EXPECT_EQ(error, "'4,5,' has an empty entry (expected e.g. 61,62,63)");
  EXPECT_FALSE(ParseNoopLayers(",4", &idx, &error));
  EXPECT_EQ(error, "',4' has an empty entry (expected e.g. 61,62,63)");
  EXPECT_FALSE(ParseNoopLayers("4,,5", &idx, &error));
  EXPECT_EQ(error, "'4,,5' has an empty entry (expected e.g. 61,62,63)");
  EXPECT_FALSE(ParseNoopLayers(",", &idx, &error));
  EXPECT_EQ(error, "',' has an empty entry (expected e.g. 61,62,63)");
  // The order given is kept.
  ASSERT_TRUE(ParseNoopLayers("63,61,62", &idx, &error));
  EXPECT_EQ(idx, (std::vector<int>{63, 61, 62}));
  ASSERT_TRUE(ParseNoopLayers("", &idx, &error));
  EXPECT_TRUE(idx.empty());
  EXPECT_TRUE(NoopPaddedSplit(61, {61, 62}, 32, &error).empty());
  EXPECT_EQ(error, "model.num_layers + the noop layers = 61 + 2 = 63 does not divide into 32 (virtual) stages");
  EXPECT_TRUE(NoopPaddedSplit(61, {61, 62, 64}, 32, &error).empty());
  EXPECT_EQ(error, "noop layer 64 is past the padded stack of 64 layers (0-based)");
}

}  // namespace
}  // namespace moetrace::tracegen
