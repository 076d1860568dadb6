// What `moetrace info` reports: counts and spans gathered in one streaming
// pass over the ranks of a trace.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "formats/trace_io.h"

namespace moetrace {

struct TraceSummary {
  std::string path;
  std::string format;  // "native", "kineto", "ascend"
  Metadata metadata;
  std::vector<int32_t> rank_ids;
  std::array<int64_t, 3> tracks_by_kind{};            // by TrackKind
  std::array<int64_t, kCategoryCount> events_by_category{};
  int64_t counter_samples = 0;
  int64_t comm_records = 0;
  int64_t routing_records = 0;
  int64_t correlated_launches = 0;   // launch events with a correlation id
  int64_t steps = 0;                 // distinct step numbers seen
  TimeNs start_ns = 0;               // earliest event or sample
  TimeNs end_ns = 0;                 // latest event end or sample
  std::map<std::string, int64_t> import_stats;  // summed over ranks

  int64_t events() const;
};

// Adds one rank to `summary`.
void AccumulateRank(const Rank& rank, TraceSummary* summary);
// Adds the ranks summarised in `part` to `into` (counts add, spans widen,
// steps take the larger count, rank ids append unsorted).
void MergeSummary(const TraceSummary& part, TraceSummary* into);
// Summarises every rank of `source` on `threads` workers (0: one per core),
// each reading its ranks into one reused Rank (every column decoded and
// checked); the result does not depend on the thread count. `progress(done, n)` is called after each rank, from
// one thread at a time. A rank that cannot be read throws its InputError;
// with several bad ranks, the first one in index order, as on one thread.
TraceSummary Summarize(const TraceSource& source,
                       const std::function<void(size_t, size_t)>& progress = {}, int threads = 0);

// The stable JSON document of `info --json` (keys documented in README).
std::string SummaryToJson(const std::vector<TraceSummary>& summaries);
// The human-readable text of `info`.
std::string SummaryToText(const TraceSummary& summary);

}  // namespace moetrace
