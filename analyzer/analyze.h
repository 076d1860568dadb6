// `moetrace analyze`: every metric of shared/docs/METRICS.md over a trace
// source, ranks analyzed in parallel with a bounded number in memory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyzer/hta/hta.h"
#include "analyzer/proto/analysis.pb.h"
#include "formats/trace_io.h"
#include "formats/trace_selection.h"

namespace moetrace {

struct AnalyzeOptions {
  int threads = 0;  // 0 = hardware concurrency; also the ranks in flight
  // Called after each rank (done, total), from worker threads, serialized.
  std::function<void(size_t, size_t)> progress;
  // For AnalyzeFiles: the ranks, steps and time to analyze (--ranks,
  // --steps). HTA's figures keep to the selected ranks but, like HTA, read
  // whole files.
  TraceSelection selection;
};

analysis::Analysis Analyze(const TraceSource& source, const AnalyzeOptions& options = {});

// Adds HTA's figures (ranks[i].hta) computed from the raw Kineto files in
// `paths` (files or directories) to `analysis`, matching ranks by rank id;
// ranks HTA has but the analysis lacks are added with only their hta part.
void AddHtaSection(const std::vector<std::string>& paths, analysis::Analysis* analysis);
// The same with figures already computed (hta::ComputeHta may run on its own
// thread while the trace model is analysed).
void AddHtaResult(const hta::HtaResult& result, analysis::Analysis* analysis);

}  // namespace moetrace
