// The operator view of one rank (analyzer/ops/README.md "Metrics"): device
// time by class, per operator (name, input shape, class) with exact
// percentiles for the rows kept, and the host's launch cost per operator
// type with the host-bound time each type ended. Built from the rows
// AnalyzeRank folded into its scratch (op_fold.h): tables indexed by
// interned name id, no string per op.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
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
  int64_t min = 0, max = 0;
  int64_t p50 = 0, p99 = 0;  // exact nearest rank; set on the first kRankTopRows rows
  // Its durations' log histogram (log_histogram.h), for the cluster's
  // percentiles: RankOps::buckets[hist_begin, hist_end).
  uint32_t hist_begin = 0, hist_end = 0;
};

// The operator type of a device op name: the name without a trailing
// "_<digits>" instance number (Ascend names an op per instance:
// trans_Cast_0, trans_Cast_13 are one type, trans_Cast).
std::string_view OperatorType(std::string_view name);

struct DispatchRow {
  StringId name = 0;        // the first name of the type seen
  uint32_t type_len = 0;    // the type: the first type_len bytes of the name
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
  std::vector<std::pair<uint32_t, int64_t>> buckets;  // (bucket, count) of every row, by row then bucket
  std::vector<DispatchRow> dispatch; // every launched or host-bound name: largest host_bound, host_ns first
  int64_t distinct_names = 0;
};

// Reusable buffers of one worker: SummarizeOps allocates nothing of its
// own per rank once they are warm.
struct OpsScratch {
  std::vector<int8_t> name_class;   // by name id: compute ViewClass, -1 unknown
  std::vector<int32_t> dispatch_of; // by name id: its type's dispatch row
  std::vector<uint32_t> order;      // rows by total
  std::vector<int32_t> kept_of;     // by row: its slot among the kept rows, -1
  std::vector<uint8_t> named;       // by name id: has a row
  std::vector<std::pair<uint64_t, StringId>> launched;
  std::vector<NameLaunch> launch_by_name;  // OpFold::LaunchesByName
  // Operator type -> its dispatch row: open addressing by the type's hash,
  // -1 empty (an unordered_map allocated and freed a node per type per
  // rank: a third of SummarizeOps' samples on the 718B trace).
  std::vector<int32_t> type_slot;
  std::vector<OpRow> folded;  // by fold row
  std::vector<std::pair<uint64_t, int64_t>> spills;  // OpFold::SortedSpills
  // Per kept row and percentile (p50, p99), one after the other: the
  // durations of the one log bucket holding the nearest rank.
  std::vector<int64_t> kept_buf;
};

// `m` and `scratch` are AnalyzeRank's result and buffers for `rank`.
RankOps SummarizeOps(const Rank& rank, const RankMetrics& m, const RankScratch& scratch,
                     OpsScratch* ops_scratch);

}  // namespace moetrace::ops
