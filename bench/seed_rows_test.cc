#include "bench/seed_rows.h"

#include <gtest/gtest.h>

namespace moetrace::bench {
namespace {

TEST(SeedRows, OnlyMeasuredRowsWithTheIssueBands) {
  SeedFigures f;
  f.ops_gain_pct = 22.3;                     // main before issue #17: out
  f.edpb_gain_pct = 17.5;                    // on the lower bound: in
  f.adaptive_unmasked_balanced_pct = 3.01;   // just above 3: out
  f.host_bound_with_pct = 0.0;
  f.host_bound_without_pct = 0.73;
  f.arxiv_tokens_per_s = 1.58e6;
  std::vector<SeedRow> rows = BuildSeedRows(f);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].row, "arxiv_tokens_per_s");
  EXPECT_DOUBLE_EQ(rows[0].band_low, 1.314e6);
  EXPECT_DOUBLE_EQ(rows[0].band_high, 1.606e6);
  EXPECT_TRUE(rows[0].within);
  EXPECT_EQ(rows[1].row, "adaptive_pipe_unmasked_balanced");
  EXPECT_EQ(rows[1].band_low, 0.0);
  EXPECT_EQ(rows[1].band_high, 3.0);
  EXPECT_FALSE(rows[1].within);
  EXPECT_EQ(rows[2].row, "edpb");
  EXPECT_EQ(rows[2].published, 25.5);
  EXPECT_EQ(rows[2].band_low, 17.5);
  EXPECT_EQ(rows[2].band_high, 33.5);
  EXPECT_TRUE(rows[2].within);
  EXPECT_EQ(rows[3].row, "operator_acceleration");
  EXPECT_EQ(rows[3].band_low, 11.0);
  EXPECT_EQ(rows[3].band_high, 19.0);
  EXPECT_FALSE(rows[3].within);
  EXPECT_EQ(rows[4].row, "host_bound_without_knobs");
  EXPECT_EQ(rows[4].band_low, 5.0);
  EXPECT_FALSE(rows[4].within);
  EXPECT_EQ(rows[5].row, "host_bound_with_knobs");
  EXPECT_EQ(rows[5].band_high, 2.0);
  EXPECT_TRUE(rows[5].within);
}

TEST(SeedRows, NegativePublishedFigureKeepsItsBandOrdered) {
  SeedFigures f;
  f.rs_activation_change_pct = -68.0;
  std::vector<SeedRow> rows = BuildSeedRows(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].band_low, -77.0);
  EXPECT_DOUBLE_EQ(rows[0].band_high, -63.0);
  EXPECT_TRUE(rows[0].within);
}

TEST(SeedRows, Run41AndRlRows) {
  // 0.41 x 353.9e12 / (0.300 x 353.9e12 x 6144 / 1.46e6) = 0.41 x 1.46e6 / (0.3 x 6144)
  EXPECT_DOUBLE_EQ(Published41TokensPerCard(), 0.41 * 1.46e6 / (0.3 * 6144));
  EXPECT_NEAR(Published41TokensPerCard(), 324.76, 0.01);
  SeedFigures f;
  f.run41_mfu_pct = 37.9;
  f.run41_tokens_per_s_per_card = 300.0;
  f.rl_fusion_utilisation_x = 1.57;
  f.rl_scaleout_linear_pct = 97.0;
  std::vector<SeedRow> rows = BuildSeedRows(f);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].row, "run41_mfu");
  EXPECT_FALSE(rows[0].within);  // 37.9 < 38
  EXPECT_EQ(rows[1].row, "run41_tokens_per_s_per_card");
  EXPECT_TRUE(rows[1].within);   // 300 >= 0.9 x 324.76 = 292.3
  EXPECT_EQ(rows[2].row, "rl_fusion");
  EXPECT_EQ(rows[2].unit, "x cluster utilisation");  // what ASCEND.md publishes
  EXPECT_DOUBLE_EQ(rows[2].band_low, 1.8);
  EXPECT_DOUBLE_EQ(rows[2].band_high, 2.2);
  EXPECT_FALSE(rows[2].within);
  EXPECT_EQ(rows[3].row, "rl_scale_out");
  EXPECT_DOUBLE_EQ(rows[3].band_low, 81.9);
  EXPECT_TRUE(rows[3].within);
}

TEST(SeedRows, JsonArray) {
  SeedFigures f;
  f.ops_gain_pct = 15.25;
  EXPECT_EQ(SeedRowsJson(BuildSeedRows(f)),
            "[\n  {\"row\": \"operator_acceleration\", \"published\": 15, \"measured\": 15.25, \"unit\": "
            "\"% throughput\", \"band_low\": 11, \"band_high\": 19, \"within\": true}\n]\n");
  EXPECT_EQ(SeedRowsJson({}), "[]\n");
}

}  // namespace
}  // namespace moetrace::bench
