// Job-level RL labels (tracegen's: rank -1, step = iteration, key = path
// below rl.iterations[step], e.g. "phases.update_actor.card_ns") against
// the `rl` section, for analyzer/label_check.
#pragma once

#include <string_view>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace::rl {

// The figure `key` of iteration `iteration` and what its error is divided
// by: the iteration's time_ns for a time ("_ns"), rl.cards × time_ns for a
// card-time ("card_ns"), 0 for a count (the caller divides by the expected
// value). False when the iteration, the phase or the field is absent.
bool LabelFigure(const analysis::Rl& rl, int iteration, std::string_view key, double* actual,
                 double* time_denominator);

}  // namespace moetrace::rl
