// The words of a proposal come from its numbers: a rule writes only the
// action ("interleaved pipeline: 2 virtual stages per rank"), and the effect
// clause of the title is computed here from what replay predicted, so a text
// can never promise what its own prediction contradicts (issue #15 part 3).
#pragma once

#include <string>
#include <string_view>

#include "analyzer/advise/advise.h"

namespace moetrace::advise {

// A short name for a `fixes` path ("bubble", "EP MaxVio", ...); the path
// itself when it has none.
std::string MetricLabel(std::string_view path);
// A value of that metric as people read it: ratios in %, bytes in GiB,
// nanoseconds in ms, MaxVio with 2 decimals.
std::string MetricValue(std::string_view path, double value);

// Whether the predicted `fixes` metric went the way the proposal promises
// (every metric a rule fixes is lower-is-better) by more than rounding: at
// least 1% of its value before (5% for the peak memory of a memory fix).
bool ImprovesItsMetric(const Proposal& p);

// "unmasked EP comm 84.5 % -> 54.1 % (-36 %)" from the prediction; "halved"
// is said only when the metric at least halves. Not the step change (shown
// beside every title already), so empty when the metric is the slowest
// rank's step and changes as the step does (within half a percentage point),
// or the proposal was not predicted.
std::string EffectText(const Proposal& p);

// Why a predicted proposal is not proposed: its metric does not go down
// (ImprovesItsMetric), or it is not a memory fix and the step time does not
// shorten by at least 0.05 % (what prints as -0.1 %) ("bubble 38.9 % -> 44.4 %: the
// plan does not lower its own metric"); empty when it is kept.
std::string DropReason(const Proposal& p);

}  // namespace moetrace::advise
