// The job-level `rl` section (analysis.proto Rl; analyzer/rl/README.md
// "Metrics") from every card's phases.
#pragma once

#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "analyzer/rl/rl_ranges.h"
#include "formats/trace.h"

namespace moetrace::rl {

// Fills `*out` when some card ran an RL phase (cards without one are not
// counted); leaves it untouched otherwise, so that a trace without RL has no
// `rl` in its JSON. Any order of `cards`: they are sorted by rank first.
// Metadata attributes used when present: "rl.instance_cards" (cards that
// record one rollout instance's `generated_tokens` counter; default 1) and
// "rl.trained_tokens.<iteration>".
void FillRl(std::vector<CardPhases> cards, const Metadata& metadata, analysis::Analysis* out);

}  // namespace moetrace::rl
