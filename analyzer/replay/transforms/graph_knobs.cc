#include "analyzer/replay/transforms/graph_knobs.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "analyzer/replay/transforms/a2a_algorithm.h"
#include "analyzer/replay/transforms/calibration.h"
#include "analyzer/replay/transforms/expert_placement.h"
#include "analyzer/replay/transforms/host_dispatch.h"
#include "analyzer/replay/transforms/micro_batch.h"
#include "analyzer/replay/transforms/recompute.h"
#include "analyzer/replay/transforms/schedule.h"
#include "analyzer/replay/transforms/slow_rank.h"
#include "formats/errors.h"

namespace moetrace::replay {
namespace {

constexpr std::string_view kOrder[] = {"slow_rank.fix",       "routing.edpb",       "comm.a2a",
                                       "memory.recompute",    "memory.swap",        "parallel.micro_batch_size",
                                       "micro_batch.scale",   "host.numa_affinity", "host.task_queue",
                                       // last: the issue order estimates from the edited durations
                                       "parallel.vpp",        "schedule.kind"};

bool ParseBool(const std::string& assignment, std::string_view v) {
  if (v == "true" || v == "1" || v == "on") return true;
  if (v == "false" || v == "0" || v == "off") return false;
  ThrowInputError("--set", assignment, "expected true or false");
}

double ParseNumber(const std::string& assignment, std::string_view v) {
  std::string s(v);
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(d > 0) || d > 1e6) {
    ThrowInputError("--set", assignment, "expected a positive number");
  }
  return d;
}

}  // namespace

bool IsGraphOnlyKnob(std::string_view key) { return key == "slow_rank.fix" || key == "micro_batch.scale"; }

// The schedule keys re-order a tracegen trace's items from its own
// configuration: a recorded trace without one cannot take them.
bool IsGraphKnob(std::string_view key) {
  return key != "parallel.vpp" && key != "schedule.kind" &&
         std::find(std::begin(kOrder), std::end(kOrder), key) != std::end(kOrder);
}

std::vector<std::string> ApplyGraphKnobs(const Trace& trace, const std::vector<std::string>& sets,
                                         GraphModifications* mods) {
  struct Set { size_t order; std::string key, value, text; };
  std::vector<Set> todo;
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) ThrowInputError("--set", s, "expected KEY=VALUE");
    const std::string key = s.substr(0, eq);
    auto it = std::find(std::begin(kOrder), std::end(kOrder), key);
    if (it == std::end(kOrder)) {
      ThrowInputError("--set", s,
                      "not modelled by the graph replay (graph knobs: parallel.micro_batch_size, "
                      "micro_batch.scale, comm.a2a, routing.edpb, memory.recompute, memory.swap, "
                      "host.task_queue, host.numa_affinity, slow_rank.fix, schedule.kind (same vpp); a tracegen trace can "
                      "be regenerated with any RunConfig key)");
    }
    todo.push_back({size_t(it - std::begin(kOrder)), key, s.substr(eq + 1), s});
  }
  std::stable_sort(todo.begin(), todo.end(), [](const Set& a, const Set& b) { return a.order < b.order; });
  EventEdits& edits = mods->edits;
  if (!edits.active && !todo.empty()) edits.Init(trace);
  const Calibration cal = CalibrationFor(trace.metadata);
  const RunSettings run = SettingsFor(trace.metadata);
  if (!cal.known && !todo.empty()) {
    edits.notes.push_back("no hardware calibration for device '" + trace.metadata.device +
                          "': costs from the trace's own measurements");
  }
  bool merged = false;  // micro-batches merged (ops removed)
  for (const Set& s : todo) {
    if (s.key == "parallel.vpp") {
      CheckVpp(trace, int(ParseNumber(s.text, s.value)));
    } else if (s.key == "schedule.kind") {
      if (merged) {
        ThrowInputError("--set", s.text,
                        "the graph re-orders the recorded micro-batches: change the schedule or "
                        "the micro-batches, not both");
      }
      edits.notes.push_back(ChangeSchedule(trace, s.value, mods));
    } else if (s.key == "slow_rank.fix") {
      char* end = nullptr;
      const long rank = std::strtol(s.value.c_str(), &end, 10);
      if (s.value.empty() || *end != '\0' || rank < 0 || rank > (1 << 30)) {
        ThrowInputError("--set", s.text, "expected a rank number");
      }
      MatchPeers(trace, int32_t(rank), &edits);
    } else if (s.key == "routing.edpb") {
      const bool on = ParseBool(s.text, s.value);
      const bool was = run.known ? run.edpb : false;
      if (on && !was) RebalanceExperts(trace, cal, &edits);
      if (!on && was) ThrowInputError("--set", s.text, "the graph replay cannot undo a placement");
    } else if (s.key == "comm.a2a") {
      if (s.value != "hierarchical" && s.value != "flat") {
        ThrowInputError("--set", s.text, "expected flat or hierarchical");
      }
      const std::string was = run.known ? run.a2a : "flat";
      if (s.value == "hierarchical" && was == "flat") {
        HierarchicalAllToAll(trace, cal, run.known ? run.top_k : 1, &edits);
      } else if (s.value != was) {
        ThrowInputError("--set", s.text, "the graph replay models flat -> hierarchical only");
      }
    } else if (s.key == "memory.recompute") {
      ChangeRecompute(trace, run.known ? run.recompute : RecomputeOf(trace), s.value, run, &edits);
    } else if (s.key == "memory.swap") {
      if (ParseBool(s.text, s.value)) {
        const bool was = run.known ? run.swap : false;
        if (!was) AddSwap(trace, cal, &edits);
      } else {
        RemoveSwap(trace, &edits);
      }
    } else if (s.key == "parallel.micro_batch_size") {
      merged = true;
      const double now = run.known ? run.mbs : 1;
      ScaleMicroBatch(trace, ParseNumber(s.text, s.value) / now, cal, &edits);
    } else if (s.key == "micro_batch.scale") {
      merged = true;
      ScaleMicroBatch(trace, ParseNumber(s.text, s.value), cal, &edits);
    } else if (s.key == "host.numa_affinity") {
      const bool on = ParseBool(s.text, s.value);
      // Without the run's settings the change is taken to be from the other state.
      const bool was = run.known ? run.numa_affinity : !on;
      if (on != was) SetNumaBinding(on, cal, mods);
    } else if (s.key == "host.task_queue") {
      SetTaskQueue(trace, ParseBool(s.text, s.value), cal, mods);
    }
  }
  return edits.notes;
}

}  // namespace moetrace::replay
