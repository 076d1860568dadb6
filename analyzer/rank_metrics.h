// Per-rank metrics of METRICS.md, computed in one linear sweep: each device
// stream yields its ops and host waits in start order, the streams are
// merged by start, and every interval union the metrics need is built on
// the fly and clipped to the step windows. All results are integer ns, so
// span = compute + comm_exposed + copy_exposed + free holds exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/ops/op_fold.h"
#include "analyzer/rank_experts.h"
#include "formats/trace.h"

namespace moetrace {

struct BreakdownNs {
  int64_t span = 0, compute = 0, comm = 0, comm_overlapped = 0, comm_exposed = 0,
          copy_exposed = 0, free = 0, host_bound = 0, host_bound_sync = 0,
          host_bound_dispatch = 0, bubble = 0;
  void Add(const BreakdownNs& o);
};

struct ClassNs {
  int64_t total = 0, exposed = 0;
};

struct StepNs {
  int32_t step = 0;
  TimeNs start = 0;
  BreakdownNs b;
  ClassNs cls[kCommClassCount];
};

// A collective of this rank that other ranks may share (group, sequence).
struct Arrival {
  StringId group = 0;
  StringId name = 0;
  int64_t sequence = -1;
  TimeNs dur = 0;
  int32_t group_size = 0;
  int32_t layer = kNone;
  int32_t step = kNone;
  CollectiveKind kind = CollectiveKind::kNone;
  int64_t recv_load = -1;  // sum of recv splits of an all-to-all(v), else -1
};

struct RankMemory {
  std::optional<int64_t> peak_allocated, peak_reserved, peak_time;
  std::vector<std::pair<CounterKind, int64_t>> at_peak;
};

// The Ascend profiler's Overlap Analysis over the whole rank (analysis.proto
// AscendOverlap): busy segments are the pieces of |COMPUTE ∪ COMM|.
struct OverlapNs {
  int64_t computing = 0, comm_not_overlapped = 0, free = 0;
  int64_t computing_segments = 0, free_segments = 0;
};

struct RankMetrics {
  int32_t rank = 0;
  int64_t event_count = 0;
  BreakdownNs total;
  ClassNs cls[kCommClassCount];
  std::vector<StepNs> steps;
  int64_t launch_count = 0;
  int64_t delay_p50 = 0, delay_p90 = 0, delay_p99 = 0;
  int64_t device_ops = 0;
  int64_t ops_with_host_wait = 0;
  RankMemory memory;
  std::vector<Arrival> arrivals;
  OverlapNs overlap;
  bool has_experts = false;
  ExpertVio experts;                     // mean over steps
  std::vector<ExpertVio> expert_steps;   // by step
  // Operator view (analyzer/ops): host-bound time by the name of the op
  // whose late launch ended the wait (sums to total.host_bound); the ops
  // themselves are folded in RankScratch::op_fold.
  std::vector<ops::WaitShare> host_bound_by_op;
};

// Reusable buffers of one worker thread: no allocation per event once warm.
struct RankScratch {
  // `name`: a host wait's op b (for the operator view), in the padding.
  struct Item { TimeNs start, end; uint32_t mask; StringId name = 0; };
  std::vector<Item> items;
  std::vector<Item> merged;  // ping-pong buffer of the run merges
  std::vector<Item> waits, merged_waits;  // host waits, apart
  std::vector<size_t> wait_run_begin;
  std::vector<Item> rare;  // the items of the less fed unions
  std::vector<size_t> run_begin;
  std::vector<uint32_t> order;
  std::vector<int32_t> op_step;
  std::vector<int64_t> delays;
  std::vector<int64_t> op_host;  // by item: the op's summed launch time, -1 none (operator view)
  std::vector<int64_t> selected;  // percentile buckets
  std::vector<std::vector<TimeNs>> sync_ends;  // by track: ends of host syncs
  // L(b) by correlation (dense tables): latest launch end and, apart, the
  // threads of the first and of the latest launch event.
  // The summed launch durations (the operator view's host time) sit beside
  // the end: pass 1 reads both for an op, so one cache line, not two
  // (apart, the host column cost ~6% of AnalyzeRank's samples).
  struct LaunchThreads { int32_t first, last; };
  struct LaunchEnd { uint64_t end_key; TimeNs host; };  // end_key: LaunchTable::EndKey
  std::vector<LaunchEnd> launch_end;
  std::vector<LaunchThreads> launch_threads;
  std::vector<int8_t> group_class, name_class;
  std::vector<int64_t> lens;
  // Pieces of the interval unions of the sweep (indexed by rank_metrics.cc's
  // Acc), sized by the number of items of each mask (counted in pass 1).
  std::vector<std::pair<TimeNs, TimeNs>> unions[7 + kCommClassCount];
  std::vector<uint64_t> mask_count;
  // The operator view's rows of the rank, filled by the sweep (op_fold.h).
  ops::OpFold op_fold;
  std::vector<int64_t> wait_by_name;  // by name id, for host_bound_by_op
  // Storage handed to RankMetrics::arrivals; give it back with Recycle().
  std::vector<Arrival> arrivals_pool;
};

// Returns the buffers of a consumed RankMetrics to `scratch` for reuse.
void Recycle(RankMetrics&& m, RankScratch* scratch);

RankMetrics AnalyzeRank(const Rank& rank, RankScratch* scratch);

}  // namespace moetrace
