// What a report says, independent of how it is rendered (HTML, Markdown):
// headline numbers with a verdict, per-rank (or per-rank-group) step
// breakdowns, communication by class, slow ranks. Built from the analysis
// alone, so a saved `analyze --json` gives the same findings as the trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/outlier_lines.h"
#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

enum class Verdict { kGood, kWarn, kBad, kInfo };
std::string_view VerdictName(Verdict v);  // "good", "warn", "bad", "info"

struct Headline {
  std::string label;   // "Host-bound"
  std::string value;   // "12.3 %"
  std::string detail;  // "sync 2.1 %, dispatch 10.2 %"
  Verdict verdict = Verdict::kInfo;
};

// Mean per-step breakdown of one rank, or of a group of ranks. The five
// parts add up to span (host_bound is the host-bound part of free).
struct RankBar {
  std::string label;  // "rank 3" or "ranks 0-63"
  double span = 0, compute = 0, comm_exposed = 0, copy_exposed = 0, host_bound = 0, other_free = 0;
  bool outlier = false;  // a slow rank shown on its own
};

struct ClassRow {
  std::string name;  // EP, TP, PP, DP, other
  double total_ns = 0, exposed_ns = 0, unmasked = 0;  // per step
};

struct Findings {
  std::string title;  // "12 ranks, 3 steps (tracegen)"
  std::vector<Headline> headlines;
  std::vector<RankBar> bars;
  bool grouped = false;  // bars are rank groups
  std::vector<ClassRow> classes;
  // cluster.slow_ranks that the terminal summary shows too (IsNotableOutlier,
  // analyzer/outlier_lines.h: at least 1% of the step away from the mean),
  // largest time away from the mean first; the others are only counted.
  std::vector<analysis::SlowRank> slow_ranks;
  std::vector<OutlierGroup> slow_groups;  // the same, grouped as the terminal groups them
  int minor_slow_ranks = 0;
  std::vector<std::string> warnings;
};

// At most `max_bars` bars: beyond that, ranks are grouped in contiguous
// blocks and the slow ranks are added as their own bars.
Findings BuildFindings(const analysis::Analysis& a, size_t max_bars = 64);

std::string FormatDuration(double ns);
std::string FormatPct(double ratio);
std::string FormatBytes(double bytes);

}  // namespace moetrace
