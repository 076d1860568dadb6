// Traces the report tests (unit and browser) share.
#pragma once

#include "analyzer/proto/analysis.pb.h"
#include "formats/trace.h"

namespace moetrace {

// The name every compute op and communication group of this trace carries:
// markup, quotes and an ampersand that must reach a page only as text.
inline constexpr const char kHostileName[] = "<script>alert(\"pwn\" & 'x')</script>";

// A small sample trace (formats/sample_trace.h) whose compute ops and
// communication groups are all named kHostileName.
Trace MakeHostileTrace();

// An analysis with only an RL section (analysis.rl), worked by hand: two
// iterations of a colocated StaleSync job on 8 cards, a role named with
// markup (`rew<ard>|"x"`) and a task no tracegen name matches (`my<task>`).
analysis::Analysis MakeRlAnalysis();

}  // namespace moetrace
