// Micro-batch size x k on a recorded trace: the step keeps its samples, so
// the micro-batches fall from M to M/k (those numbered M/k and above go,
// with their launches, syncs and memory); the rest carry k times the tokens:
// compute ops cost overhead + k x the rest (the calibration's fixed kernel
// cost, 0 when unknown), collectives alpha + k x their transfer, copies k x.
// Launch cost per op is unchanged, so host-boundness changes as it would.
// Activation memory of a micro-batch scales by k. The 1F1B order of the
// remaining micro-batches is the order 1F1B gives M/k micro-batches; other
// schedules keep their recorded order (an approximation).
#pragma once

#include "analyzer/replay/event_edits.h"
#include "analyzer/replay/transforms/calibration.h"
#include "formats/trace.h"

namespace moetrace::replay {

// Throws InputError when k is not a whole number dividing the micro-batch count.
void ScaleMicroBatch(const Trace& trace, double k, const Calibration& cal, EventEdits* edits);

// Micro-batches per step in the trace (max micro_batch + 1 of device ops; 0 = none).
int32_t MicroBatchCount(const Trace& trace);

}  // namespace moetrace::replay
