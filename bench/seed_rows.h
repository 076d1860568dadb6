// seed_table's rows as data: each published effect, what was measured, the
// band the issues set (#17; RL rows: ±10% of the published figure, #16 set
// none) and whether the measurement falls in it. `seed_table --json` prints
// them; the figures come from the runs in seed_table.cc / seed_table_rl.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace moetrace::bench {

struct SeedRow {
  std::string row, unit;
  double published = 0, measured = 0, band_low = 0, band_high = 0;
  bool within = false;  // band_low <= measured <= band_high
};

// Measured figures; a row is built only when its figures are present (the
// row filter leaves the others out). Percentages in points (2.5 = 2.5%).
struct SeedFigures {
  std::optional<double> arxiv_mfu_pct, arxiv_tokens_per_s;  // 6,144 cards
  std::optional<double> run41_mfu_pct, run41_tokens_per_s_per_card;
  std::optional<double> hier_speedup;                       // flat / hierarchical EP time
  std::optional<double> adaptive_unmasked_balanced_pct;     // routing.skew 0, adaptive
  std::optional<double> adaptive_unmasked_skew_edpb_pct;    // preset skew, adaptive + EDPB
  std::optional<double> edpb_gain_pct, adaptive_edpb_gain_pct;
  std::optional<double> ops_gain_pct;
  std::optional<double> rs_activation_change_pct;           // -68 = 68% less
  std::optional<double> host_bound_without_pct, host_bound_with_pct;
  std::optional<double> rl_fusion_utilisation_x, rl_stalesync_x, rl_both_x, rl_scaleout_linear_pct;
};

// Published 41% MFU as tokens/s per card under the arXiv report's own
// FLOPs per token (30.0% of 353.9 TFLOPS x 6,144 cards / 1.46 M tokens/s =
// 446.8 GFLOP per token): 0.41 x 353.9e12 / 446.8e9. That count is at the
// arXiv run's sequence length; the 41% run was at 8K, so this holds only if
// the arXiv run was at 8K too (at 4K: 291-304, bench/README.md "run41
// (session 14)").
double Published41TokensPerCard();

std::vector<SeedRow> BuildSeedRows(const SeedFigures& f);

// One JSON array, a row per object, keys in the order of SeedRow's
// contract: row, published, measured, unit, band_low, band_high, within.
std::string SeedRowsJson(const std::vector<SeedRow>& rows);

}  // namespace moetrace::bench
