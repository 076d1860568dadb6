// Replays a recorded trace through its dependency graph under
// modifications. The graph, built from any trace:
//   - host thread order: each launch/sync waits for the previous one plus
//     the host work recorded between them (scaled by the host factor);
//   - a launch chain: the dispatch-thread launch waits for the enqueue of
//     the same correlation; a device op waits for L(b), its latest launch;
//   - stream order, and a cross-stream wait inferred where neither the
//     stream nor the launch explains an op's start (event record/wait);
//   - a host sync ends when the device op it waited for ends (the latest
//     op issued before the sync, by its first launch: the enqueue when a
//     task queue is on, and ended before the sync returned);
//   - collectives matched across ranks (group, sequence, every member
//     present) are rendezvous: they end a transfer time after the last
//     member's arrival; a pipeline receive ends when its send does.
// Every node keeps the unexplained part of its original start as slack, so
// an unmodified replay reproduces the trace exactly; collective ends are
// computed without assuming aligned clocks (members finish together).
// The scheduler is a topological sweep (Kahn) over all ranks, linear in
// the events; a cycle (inconsistent input) is broken by forcing the
// earliest blocked node with its original times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/replay/event_edits.h"
#include "analyzer/replay/op_class.h"
#include "formats/trace.h"

namespace moetrace::replay {

// An op of a rank: (track, event index).
struct OpRef {
  int32_t track = -1;
  int64_t event = -1;
};

// A new issue order for one rank (transforms/schedule.h). The rank's host
// threads launch in the order given, each launch or sync keeping the host
// work recorded before it; its device ops follow the virtual streams and
// the explicit waits given instead of the order and cross-stream waits
// inferred from the recorded times.
struct RankOrder {
  bool active = false;
  // [track] -> the track's launch and sync events in the new order (every
  // one of them); an empty list keeps the recorded order.
  std::vector<std::vector<int64_t>> thread;
  // Device streams in the new order; every device op of the rank is in one.
  std::vector<std::vector<OpRef>> streams;
  // (op, the op whose end it waits for): chain dependencies.
  std::vector<std::pair<OpRef, OpRef>> waits;
};

struct GraphModifications {
  // Device time divisor per class (2 = twice as fast).
  double speed[kOpClassCount] = {1, 1, 1, 1, 1, 1, 1};
  // Multiplies host issue costs: launch calls and the host work between them.
  double host_factor = 1.0;
  // Host syncs whose name contains one of these are removed (no wait).
  std::vector<std::string> remove_syncs;
  // A dispatch stage the trace does not have (the task queue switched on):
  // each rank's launches pass through one dequeue thread that takes this
  // long an op, in the recorded enqueue order (a re-ordered rank: a fixed
  // lag after each op's launch instead).
  TimeNs launch_lag_ns = 0;
  // Per-event durations, removals and memory deltas from the graph
  // transforms (inactive = the trace's own).
  EventEdits edits;
  // Per rank index; empty (or inactive) = the recorded order.
  std::vector<RankOrder> order;
  // [rank id] -> role (roles.h) when the trace holds one representative per
  // role: a collective's present members (>= 2) are its rendezvous, the
  // absent ones assumed to shift as their role's representative does; a
  // pipeline receive matches the send of its peer's representative (same
  // sequence, roles as the recorded pair). Empty = the whole trace.
  std::vector<int32_t> role_of;
  bool IsIdentity() const;
};

struct GraphStats {
  int64_t nodes = 0;
  int64_t collectives_matched = 0;     // rendezvous (all members present)
  int64_t collectives_unmatched = 0;   // replayed with their own duration
  int64_t recvs_matched = 0;
  int64_t syncs_with_release = 0;
  int64_t syncs_removed = 0;
  int64_t cross_stream_waits = 0;      // inferred event waits
  int64_t forced = 0;                  // nodes forced to break a cycle
};

// Returns the predicted trace (same events, new times; counters remapped).
// `threads`: workers for the passes over ranks (building the graph, writing
// the trace); 0 or less = one per core. The schedule itself is one pass. The result
// does not depend on it.
Trace ReplayGraph(const Trace& trace, const GraphModifications& mods, GraphStats* stats = nullptr,
                  int threads = 0);

}  // namespace moetrace::replay
