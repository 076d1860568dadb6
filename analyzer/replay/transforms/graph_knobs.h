// RunConfig knobs as graph transforms of a recorded trace (no
// regeneration): the change each key names, from the run's current value
// (the trace's configuration when it has one, else what the events show),
// applied to the event edits of `mods`:
//   parallel.micro_batch_size=N     micro_batch.h (x N / current)
//   micro_batch.scale=K             the same, by factor
//   comm.a2a=hierarchical|flat      a2a_algorithm.h
//   routing.edpb=true               expert_placement.h
//   memory.recompute=none|selective|full, memory.swap=false   recompute.h
//   host.task_queue=BOOL, host.numa_affinity=BOOL               host_dispatch.h
//   slow_rank.fix=R                 slow_rank.h
//   schedule.kind=K, parallel.vpp=V schedule.h (same vpp only)
// Any other key is an InputError: the graph does not model it (regenerate
// a tracegen trace instead).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/replay/graph_replay.h"
#include "formats/trace.h"

namespace moetrace::replay {

// Keys ApplyGraphKnobs understands on any trace (schedule.kind and
// parallel.vpp need the trace's configuration and are not listed).
bool IsGraphKnob(std::string_view key);
// Keys that exist only as graph transforms (no RunConfig equivalent).
bool IsGraphOnlyKnob(std::string_view key);

// Applies the assignments (KEY=VALUE) in a fixed order (placement,
// all-to-all, recompute, swap, micro-batch, NUMA, task queue, schedule) so
// that each sees the run the previous ones made (the schedule last: its
// issue order is estimated from the edited durations). Returns what was done.
std::vector<std::string> ApplyGraphKnobs(const Trace& trace, const std::vector<std::string>& sets,
                                         GraphModifications* mods);

}  // namespace moetrace::replay
