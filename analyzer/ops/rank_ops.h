// The operator view of one rank (analyzer/ops/README.md "Metrics"): device
// time by class, per operator (name, input shape, class) with exact
// percentiles for the rows kept, and the host's launch cost per operator
// type with the host-bound time each type ended. Built from the OpRecords
// AnalyzeRank leaves in its scratch: tables indexed by interned name id, no
// string per op.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/ops/log_histogram.h"
#include "analyzer/ops/view_class.h"
#include "analyzer/rank_metrics.h"

namespace moetrace::ops {

// Rows with exact p50 / p99 per rank, and rows written to ranks[i].operators.
inline constexpr size_t kRankTopRows = 5;
inline constexpr size_t kRankDispatchRows = 3;

struct OpRow {
  StringId name = 0, shape = 0;
  ViewClass cls = ViewClass::kVector;
  int64_t count = 0, total = 0;
  int64_t p50 = 0, p99 = 0;  // exact nearest rank; set on the first kRankTopRows rows
  LogHistogram hist;         // every row: the cluster's percentiles
};

struct DispatchRow {
  StringId name = 0;
  int64_t count = 0;        // device ops joined to a launch
  int64_t host_ns = 0;      // their launch events' summed durations
  int64_t small = 0;        // of them, device time < host time
  int64_t device_ns = 0;    // their device time
  int64_t host_bound_ns = 0;
};

struct RankOps {
  int32_t steps = 0;
  int64_t class_count[kViewClassCount] = {};
  int64_t class_total[kViewClassCount] = {};
  std::vector<OpRow> rows;           // every (name, shape, class): largest total first
  std::vector<DispatchRow> dispatch; // every launched or host-bound name: largest host_bound, host_ns first
  int64_t distinct_names = 0;
};

// Reusable buffers of one worker.
struct OpsScratch {
  std::vector<int32_t> head;        // by name id: first row of the name
  std::vector<int32_t> next;        // by row: next row of the same name
  std::vector<uint32_t> row_of;     // by record
  std::vector<int64_t> offset;      // by row: start in `sorted`
  std::vector<int64_t> sorted;      // durations grouped by row
  std::vector<int8_t> name_class;   // by name id: compute ViewClass, -1 unknown
  std::vector<int32_t> dispatch_of; // by name id
  std::vector<int64_t> bucket_count;
  std::vector<uint32_t> touched;
};

// `m` and `scratch` are AnalyzeRank's result and buffers for `rank`.
RankOps SummarizeOps(const Rank& rank, const RankMetrics& m, const RankScratch& scratch,
                     OpsScratch* ops_scratch);

}  // namespace moetrace::ops
