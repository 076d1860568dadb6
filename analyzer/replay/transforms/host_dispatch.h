// Host dispatch changes on a recorded trace, from the calibration's host
// costs (framework + launch per op; with the task queue framework + enqueue
// on the Python thread and the launch on a dispatch thread):
//  - task queue on: the Python thread's launch calls shrink by
//    (framework + enqueue) / (framework + launch), and every op waits a
//    further launch-share of the recorded call (the dispatch thread's
//    launch, which keeps up while it is cheaper than the Python side);
//  - task queue off: the Python calls grow by the inverse ratio and the
//    dispatch thread's launches cost nothing (the op waits for the Python call);
//  - NUMA binding on/off: every host issue cost / x cross_numa_factor.
// Without a calibration the ratios use the atlas-800t-a2 figures.
#pragma once

#include "analyzer/replay/event_edits.h"
#include "analyzer/replay/graph_replay.h"
#include "analyzer/replay/transforms/calibration.h"
#include "formats/trace.h"

namespace moetrace::replay {

// True when launches run on a dispatch thread (TrackRole::kHostDispatch with launches).
bool HasTaskQueue(const Trace& trace);

void SetTaskQueue(const Trace& trace, bool on, const Calibration& cal, GraphModifications* mods);
// bound: to NUMA-local binding (true) or away from it (false).
void SetNumaBinding(bool bound, const Calibration& cal, GraphModifications* mods);

}  // namespace moetrace::replay
