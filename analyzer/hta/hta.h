// Holistic Trace Analysis' own figures on Kineto JSON traces, computed the
// way HTA 0.6.1 computes them (shared/docs/hta-compat.md), from the raw rows.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/hta/kineto_rows.h"

namespace moetrace::hta {

struct Temporal {
  double kernel_span_us = 0, idle_us = 0, compute_us = 0, non_compute_us = 0;
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;  // NaN when span is 0
};

struct IdleStream {
  std::optional<double> host_wait_us, kernel_wait_us, other_us;
};

struct LaunchStats {
  int64_t count = 0;
  std::optional<double> launch_delay_mean_us, launch_delay_p50_us;
};

struct HtaRank {
  int64_t rank = 0;
  std::string file;
  std::optional<Temporal> temporal;           // absent when HTA fails (see errors)
  double comm_comp_overlap_pct = 0;           // NaN = HTA's NaN (null)
  std::optional<std::map<int64_t, IdleStream>> idle_by_stream;
  LaunchStats launch;
  // Why a call failed on this rank (HTA then fails it for the whole set).
  std::string temporal_error, idle_error;
};

struct HtaResult {
  std::vector<HtaRank> ranks;        // ascending rank
  std::vector<std::string> errors;   // figures HTA fails to produce, and why
  std::vector<std::string> warnings; // e.g. duplicate ranks
};

// `paths`: Kineto JSON files and/or directories of them (one trace set).
// Throws InputError for unreadable files or an HTA loading failure.
HtaResult ComputeHta(const std::vector<std::string>& paths);

class ImportedRows;
// The same, taking the rows of the files the importer read from `imported`
// (analyzer/hta/imported_rows.h) and reading only the others. Rows beyond
// `held_rows_bytes` are not kept while the set's plan waits for every file:
// those files are read again for their figures (same figures, bounded memory).
constexpr size_t kHeldRowsBytes = size_t(384) << 20;
HtaResult ComputeHta(const std::vector<std::string>& paths, ImportedRows* imported,
                     size_t held_rows_bytes = kHeldRowsBytes);

// The same on rows already read (tests build rows by hand). Aligns them.
// It is PlanSet, then ComputeRank on each kept file, then FinishSet: the
// steps a multi-process analyze (analyzer/distributed.cc) runs apart.
HtaResult ComputeHtaOnRows(std::vector<RankRows> ranks);

// What HTA's set-level decisions need of one file.
struct FileFacts {
  int64_t rank = 0;
  std::string file;
  size_t rows = 0;
  std::string bad_step_name;
  std::set<std::string> steps;
  int64_t min_ts = std::numeric_limits<int64_t>::max();
};
FileFacts FactsOf(const RankRows& rows);
// The set-level decisions (§1.3-1.4, §4, §5.1) from every file's facts, in
// ListTraceFiles order.
struct SetPlan {
  std::vector<size_t> kept;  // indices into the facts, ascending rank
  bool step_filter = false;
  int64_t t0 = 0;
  std::vector<std::string> warnings;
};
// Throws InputError when HTA cannot load the set.
SetPlan PlanSet(const std::vector<FileFacts>& files);
// One kept file's figures (its temporal/idle errors set when a call fails).
HtaRank ComputeRank(RankRows rows, const SetPlan& plan);
// `result->ranks` ascending: errors in rank order, and a call that failed on
// one rank cleared on all (HTA fails it for the whole set).
void FinishSet(HtaResult* result);

}  // namespace moetrace::hta
