// `moetrace gate`: compares an analysis with a baseline saved by
// `analyze --json`, metric by metric (JSON paths of METRICS.md), and says
// which metrics regressed past their threshold.
//
// A threshold has a direction (lower or higher is better) and a tolerance:
// `abs` (in the metric's unit) and/or `rel` (a share of |baseline|). The
// metric regresses when it moved in the bad direction by MORE than
// max(abs, rel * |baseline|); moving the other way is an improvement.
// A metric the baseline has but the current analysis lacks regresses
// ("missing"); one neither has is skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "analyzer/proto/diff.pb.h"

namespace moetrace {

struct GateThreshold {
  std::string path;            // e.g. "cluster.ratios.host_bound"
  bool higher_is_better = false;
  std::optional<double> abs;   // tolerance in the metric's unit
  std::optional<double> rel;   // tolerance as a share of |baseline|
};

// The documented default set (analyzer/GATE.md).
std::vector<GateThreshold> DefaultGateThresholds();

// Parses a thresholds file (TOML subset documented in analyzer/GATE.md).
// Throws InputError "FILE: line N: ..." on a malformed file.
std::vector<GateThreshold> ParseGateThresholds(std::string_view text, std::string_view file);
std::vector<GateThreshold> LoadGateThresholds(const std::string& path);

enum class GateVerdict { kPass, kImproved, kRegressed, kMissing, kSkipped };
std::string_view GateVerdictName(GateVerdict v);  // "pass", "improved", ...

struct GateRow {
  GateThreshold threshold;
  std::optional<double> baseline, current;
  double delta = 0;        // current - baseline (when both are known)
  double tolerance = 0;    // max(abs, rel * |baseline|)
  GateVerdict verdict = GateVerdict::kSkipped;
};

struct GateResult {
  std::vector<GateRow> rows;
  // Baseline (A) against current (B), for the operator deltas that the
  // Markdown and JUnit outputs add when a time metric regressed.
  analysis::Diff diff;
  bool regressed() const;  // any kRegressed or kMissing
  bool time_regressed() const;  // a regressed (not missing) metric of IsTimeMetric
};

GateResult RunGate(const analysis::Analysis& baseline, const analysis::Analysis& current,
                   const std::vector<GateThreshold>& thresholds);

// Reads a document written by `analyze --json`; throws InputError naming the
// file. `threads` != 1: parsed by ParseAnalysisJsonSplit (0: all cores).
analysis::Analysis LoadAnalysisJson(const std::string& path, int threads = 1);
analysis::Analysis ParseAnalysisJson(std::string_view json, std::string_view file);

// The terminal table: metric, baseline, current, delta, threshold, verdict.
std::string FormatGateTable(const GateResult& result);
// JUnit XML: one testcase per metric, <failure> on a regression (with the
// top operator deltas when the metric is a time metric).
std::string GateJUnitXml(const GateResult& result);
// GitHub-flavoured Markdown for a pull-request comment; when a time metric
// regressed, followed by the top operator deltas (analyzer/GATE.md).
std::string GateMarkdown(const GateResult& result);

// How a value of `path` is printed (ratios as %, times as ms, bytes as GiB).
std::string FormatMetricValue(std::string_view path, double v);
std::string XmlEscape(std::string_view s);

}  // namespace moetrace
