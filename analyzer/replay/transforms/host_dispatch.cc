#include "analyzer/replay/transforms/host_dispatch.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace moetrace::replay {
namespace {

struct HostCosts {
  double framework = 12000, launch = 18460, enqueue = 2500;  // atlas-800t-a2 (its hardware JSON)
};

HostCosts CostsOf(const Calibration& cal) {
  HostCosts h;
  if (cal.known && cal.framework_op_ns + cal.launch_ns > 0) {
    h.framework = cal.framework_op_ns;
    h.launch = cal.launch_ns;
    h.enqueue = cal.enqueue_ns;
  }
  return h;
}

}  // namespace

bool HasTaskQueue(const Trace& trace) {
  for (const Rank& r : trace.ranks) {
    for (const Track& t : r.tracks) {
      if (t.kind != TrackKind::kHostThread || t.role != TrackRole::kHostDispatch) continue;
      for (Category c : t.events.category) {
        if (c == Category::kLaunch) return true;
      }
    }
  }
  return false;
}

void SetTaskQueue(const Trace& trace, bool on, const Calibration& cal, GraphModifications* mods) {
  EventEdits* edits = &mods->edits;
  if (!edits->active) edits->Init(trace);
  if (on == HasTaskQueue(trace)) return;
  const HostCosts h = CostsOf(cal);
  const double with_queue = h.framework + h.enqueue, without = h.framework + h.launch;
  std::vector<TimeNs> python_calls;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      if (tr.kind != TrackKind::kHostThread) continue;
      const bool dispatch = tr.role == TrackRole::kHostDispatch;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.category[i] != Category::kLaunch || tr.events.correlation[i] < 0) continue;
        TimeNs& d = edits->dur[r][t][i];
        if (dispatch) {
          if (!on) d = 0;
          continue;
        }
        if (on) python_calls.push_back(d);
        d = TimeNs(std::llround(double(d) * (on ? with_queue / without : without / with_queue)));
      }
    }
  }
  if (on && !python_calls.empty()) {
    // The dispatch thread's launch: the launch share of the median recorded call.
    std::nth_element(python_calls.begin(), python_calls.begin() + python_calls.size() / 2, python_calls.end());
    const double call = double(python_calls[python_calls.size() / 2]);
    mods->launch_lag_ns += TimeNs(std::llround(call * h.launch / without * mods->host_factor));
  }
  edits->notes.push_back(on ? "task queue on" : "task queue off");
}

void SetNumaBinding(bool bound, const Calibration& cal, GraphModifications* mods) {
  const double f = cal.cross_numa_factor > 0 ? cal.cross_numa_factor : 1.35;
  mods->host_factor *= bound ? 1.0 / f : f;
  mods->edits.notes.push_back(bound ? "NUMA-local binding" : "cross-NUMA dispatch");
}

}  // namespace moetrace::replay
