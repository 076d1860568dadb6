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

// Swap on (tracegen's policy): each layer instance's kept activations go to
// the host, as much as the host link moves while the layer's forward
// computes (min(kept, forward compute time x host link bandwidth)), freed
// when that copy ends after the layer's last forward op, back when the
// micro-batch's backward starts (prefetched: the backward is assumed not to
// wait); each copy adds one launch on the host. Returns the layer instances swapped.
int64_t AddSwap(const Trace& trace, const Calibration& cal, EventEdits* edits);

}  // namespace moetrace::replay
