// The terminal summary of `moetrace analyze`: the few numbers that matter
// first (step time, host-bound, unmasked EP communication, bubble, free,
// MaxVio, peak memory and headroom, MFU), then the outlier ranks and the
// collectives everyone waited in, then HTA's figures when present.
#pragma once

#include <string>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

std::string FormatSummary(const analysis::Analysis& a);

}  // namespace moetrace
