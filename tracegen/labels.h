// Ground truth: the METRICS.md figures of one rank, per step, computed from
// the events the engine emitted with exactly METRICS.md's definitions
// (step window, unions of intervals, host waits joined by correlation).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "formats/trace.h"

namespace moetrace::tracegen {

struct StepBreakdown {
  int32_t step = kNone;
  TimeNs span = 0, compute = 0, comm = 0, comm_overlapped = 0, comm_exposed = 0;
  TimeNs copy_exposed = 0, free = 0, host_bound = 0, host_bound_sync = 0;
  TimeNs host_bound_dispatch = 0, bubble = 0;
  std::array<TimeNs, kCommClassCount> class_total{}, class_exposed{};
  double peak_allocated = 0;
  double max_vio = -1, ep_max_vio = -1;  // -1: no routing records
};

std::vector<StepBreakdown> ComputeBreakdown(const Rank& rank);

// LabeledValues for every step and summed over steps (step = -1), keys as
// the JSON paths of METRICS.md below ranks[i].
std::vector<LabeledValue> GroundTruthLabels(const Rank& rank);

// Peak of the allocated counter and the category holding most at that instant.
struct MemoryPeak {
  double peak = 0;
  TimeNs at = 0;
  std::string holder;
  double holder_bytes = 0;
};
MemoryPeak FindMemoryPeak(const Rank& rank);

}  // namespace moetrace::tracegen
