// `moetrace analyze`: every metric of shared/docs/METRICS.md over a trace
// source, ranks analyzed in parallel with a bounded number in memory.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/cluster.h"
#include "analyzer/hta/hta.h"
#include "analyzer/proto/analysis.pb.h"
#include "analyzer/rl/rl_ranges.h"
#include "formats/rank_reference.h"
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
  // A rank that fails to read or analyse (InputError) is left out and named
  // in Analysis::skipped_ranks instead of failing the run.
  bool skip_bad_ranks = false;
  // Where the source's reads put the profiler figures they carry (a source
  // opened with them: formats/rank_reference.h), or null: AnalyzeRanks takes
  // those of its ranks into PartialAnalysis::reference.
  std::shared_ptr<RankReference> rank_reference;
};

analysis::Analysis Analyze(const TraceSource& source, const AnalyzeOptions& options = {});

// Some of a source's ranks analysed (one process's share under mpirun): each
// rank's own figures, and what crosses ranks. Analyze = AnalyzeRanks(all)
// then FinishAnalysis; process 0 merges the others' parts in between.
struct PartialAnalysis {
  std::vector<std::pair<size_t, analysis::RankAnalysis>> ranks;  // (source index, figures)
  ClusterAccumulator cluster;
  std::vector<std::pair<size_t, analysis::SkippedRank>> skipped;  // (source index, why)
  // The profiler figures that came with the ranks' reads, any order of
  // ranks: FinishAnalysis puts them where the metadata's placeholders stand.
  std::vector<LabeledValue> reference;
  // The RL phases of the ranks that ran one (analyzer/rl), any order.
  std::vector<rl::CardPhases> rl;
};
PartialAnalysis AnalyzeRanks(const TraceSource& source, const std::vector<size_t>& indices,
                             const AnalyzeOptions& options = {});
// The cluster figures and label checks over every rank in `part`.
analysis::Analysis FinishAnalysis(const Metadata& metadata, PartialAnalysis part);

// Adds HTA's figures (ranks[i].hta) computed from the raw Kineto files in
// `paths` (files or directories) to `analysis`, matching ranks by rank id;
// ranks HTA has but the analysis lacks are added with only their hta part.
void AddHtaSection(const std::vector<std::string>& paths, analysis::Analysis* analysis);
// The same with figures already computed (hta::ComputeHta may run on its own
// thread while the trace model is analysed).
void AddHtaResult(const hta::HtaResult& result, analysis::Analysis* analysis);

}  // namespace moetrace
