// What `gate` adds when a time metric regressed: the operators whose device
// time grew most and the operator types whose host-bound dispatch grew,
// baseline -> current (cluster.operators of both), so a failed CI run says
// what got slower (analyzer/GATE.md "Operator deltas").
#pragma once

#include <string>
#include <string_view>

#include "analyzer/proto/diff.pb.h"

namespace moetrace {

inline constexpr int kGateOperatorRows = 5;

// Metrics whose regression means the step (or a share of it) got slower:
// times, ratios of the step, MFU/HFU, tokens/s. Not memory or expert balance.
bool IsTimeMetric(std::string_view path);

// A Markdown section (empty string when neither side has an operator view).
std::string GateOperatorsMarkdown(const analysis::Diff& diff);
// One line for a JUnit failure text.
std::string GateOperatorsText(const analysis::Diff& diff);

}  // namespace moetrace
