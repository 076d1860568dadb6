// Recompute and swap changes on a recorded trace.
//  - to none: recompute-tagged ops (Phase::kRecompute) go with their
//    launches; the recompute buffer (memory.recompute) becomes activations
//    kept from the forward to the backward.
//  - none -> selective: each FlashAttention backward first re-runs its
//    forward (the forward op's time and launch cost added to it); the
//    attention scores, 5*a*s^2*b/t bytes per layer (Korthikanti et al.),
//    are no longer kept but rebuilt during that layer's backward.
//  - none -> full: each layer's backward first re-runs its forward: the
//    forward's compute time and launches on the first backward op, each
//    forward collective's transfer on the matching backward one; a layer
//    keeps only its input, 2*s*b*h/t bytes.
//  - swap off: swap copies (kFlagSwapOut / kFlagSwapIn) go, with the memory
//    they freed.
// Memory sizes need the model shape (RunSettings); without it only times
// change and a note says so.
#pragma once

#include <string>

#include "analyzer/replay/event_edits.h"
#include "analyzer/replay/transforms/calibration.h"
#include "formats/trace.h"

namespace moetrace::replay {

// "none", "selective" or "full" from the recompute-tagged ops of the trace.
std::string RecomputeOf(const Trace& trace);

// Throws InputError on an unknown mode.
void ChangeRecompute(const Trace& trace, const std::string& from, const std::string& to,
                     const RunSettings& settings, EventEdits* edits);

// Removes swap copies (returns how many).
int64_t RemoveSwap(const Trace& trace, EventEdits* edits);

}  // namespace moetrace::replay
