// Cutting a trace down to what a user asks for: some ranks, some steps, a
// time window (`analyze --ranks/--steps`, `convert --ranks/--steps/--window`),
// so that a 6,144-rank run becomes something Perfetto can open.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "formats/trace_io.h"

namespace moetrace {

struct TraceSelection {
  std::vector<int32_t> ranks;  // rank ids, sorted; empty = every rank
  std::vector<int32_t> steps;  // step numbers, sorted; empty = every step
  int64_t from_ns = INT64_MIN;  // events that overlap [from_ns, to_ns)
  int64_t to_ns = INT64_MAX;
  bool SelectsAll() const {
    return ranks.empty() && steps.empty() && from_ns == INT64_MIN && to_ns == INT64_MAX;
  }
};

// "0-7,64" -> {0..7, 64}: sorted, unique, non-negative. `what` names the
// option in the InputError a bad list throws ("--ranks").
std::vector<int32_t> ParseIdList(std::string_view spec, const char* what);

// "FROM:TO", absolute times in the trace's clock (as `info` prints them),
// each with an optional unit: ns (default), us, ms, s. Either side may be
// empty ("1.5s:" is from 1.5 s on).
void ParseWindow(std::string_view spec, TraceSelection* selection);

// The ranks of `source` whose id is selected, each with only the events the
// selection keeps. Rank ids come from TraceSource::RankId where the source
// knows them at open (native, Kineto); others are read once to learn them.
// Throws InputError naming the option when nothing is selected.
std::unique_ptr<TraceSource> SelectFrom(std::unique_ptr<TraceSource> source,
                                        const TraceSelection& selection);

// Keeps the events of `rank` that the selection's steps and window keep
// (ranks are not looked at). A step's window is its step marker's span;
// an event without a step is kept when it overlaps a selected step's
// window. Counter samples inside the kept time, and the one in force at
// its start, are kept; comm records follow their events.
void FilterRankEvents(const TraceSelection& selection, Rank* rank);

}  // namespace moetrace
