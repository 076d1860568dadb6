// Per-event edits the graph transforms (transforms/*.h) make before the
// dependency-graph replay: a new duration for a device op or a host launch,
// the removal of an op (with its launches), extra host issue cost, and the
// memory counters as deltas attached to the device ops that caused them (so
// a transform can scale, move or drop them and the replay re-times them).
//
// Durations compose: every transform reads the current value and writes a
// new one. For a matched collective the replay takes the smallest member
// duration as the transfer after the last arrival, so transforms apply the
// same monotonic function to every member.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/trace.h"

namespace moetrace::replay {

// Weights, gradients, optimizer, activations, recompute, swap, comm: the
// categories whose sum is the allocated total.
bool IsMemoryCategory(CounterKind k);

// One step of a memory counter, attached to a device op's start or end.
struct MemDelta {
  int32_t counter_track = -1;  // the counter track it belongs to
  int32_t op_track = -1;       // -1: not attached (keeps its time)
  int64_t op_event = -1;
  bool at_end = false;
  TimeNs ts = 0;               // original time
  double delta = 0;
  bool removed = false;
  TimeNs offset = 0;           // after the op's edge (a copy that follows it)
};

struct RankMemory {
  std::vector<MemDelta> deltas;   // sorted by original time (then sample order)
  int32_t total_track = -1;       // kMemAllocated, rebuilt as the sum of the categories
  bool derived_total = false;     // the category tracks sum to the total
};

struct LaunchIndex;

struct EventEdits {
  bool active = false;  // Init() called
  // [rank index][track][event] (counter tracks empty).
  std::vector<std::vector<std::vector<TimeNs>>> dur;
  std::vector<std::vector<std::vector<uint8_t>>> removed;
  std::vector<RankMemory> memory;  // per rank; deltas empty = counters remapped only
  bool memory_edited = false;
  std::vector<std::string> notes;  // what the transforms did (for the report)
  // (step, layer) -> each expert's EP rank after a migration
  // (RebalanceExperts): the predicted trace's routing records carry it, so
  // that its analysis sees the placement the durations were replayed with.
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> placements;

  void Init(const Trace& trace);
  // Removes the device op (rank index r, track t, event i) and every host
  // launch of its correlation; the memory deltas attached to it are dropped.
  void RemoveOp(const Trace& trace, size_t r, size_t t, size_t i, const LaunchIndex& launches);
  bool IsRemoved(size_t r, size_t t, size_t i) const { return removed[r][t][i] != 0; }
};

// Host launch events of a rank by correlation: (track, event) pairs.
struct LaunchIndex {
  explicit LaunchIndex(const Rank& rank);
  // Launches of `corr`, in track order; empty when none.
  std::vector<std::pair<int32_t, int64_t>> Of(int64_t corr) const;

 private:
  std::vector<std::pair<int64_t, std::pair<int32_t, int64_t>>> sorted_;
};

}  // namespace moetrace::replay
