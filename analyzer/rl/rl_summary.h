// The terminal summary's RL lines (analyzer/summary.cc), from the `rl` section.
#pragma once

#include <string>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace::rl {

// Empty when `rl` is not present.
std::string FormatRlSummary(const analysis::Rl& rl);

}  // namespace moetrace::rl
