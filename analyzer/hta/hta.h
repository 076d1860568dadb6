// Holistic Trace Analysis' own figures on Kineto JSON traces, computed the
// way HTA 0.6.1 computes them (shared/docs/hta-compat.md), from the raw rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
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
// (analyzer/hta/imported_rows.h) and reading only the others.
HtaResult ComputeHta(const std::vector<std::string>& paths, ImportedRows* imported);

// The same on rows already read (tests build rows by hand). Aligns them.
HtaResult ComputeHtaOnRows(std::vector<RankRows> ranks);

}  // namespace moetrace::hta
