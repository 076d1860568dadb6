// Opens trace files and analyzes them as one trace, the way `analyze`,
// `report` and `gate` read their inputs: each Kineto file is read whole and
// parsed once (on two threads when it is large and the set has fewer files
// than cores); that pass also gives HTA's rows, from which HTA's figures
// (analyzer/hta) fill the analysis' `hta` section.
// An msprof-analyze cluster_analysis_output among the inputs (or inside a
// profiling root) fills `cluster_output` (analyzer/cluster_output.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/proto/analysis.pb.h"
#include "formats/trace_io.h"

namespace moetrace {

struct AnalyzedFiles {
  analysis::Analysis analysis;
  std::unique_ptr<TraceSource> trace;  // the ranks of all inputs, in input order
};

// Throws InputError for an unreadable input; HTA's own failure to load a
// set is recorded in analysis.hta_errors instead (HTA gives no figures then).
AnalyzedFiles AnalyzeFiles(const std::vector<std::string>& inputs, const AnalyzeOptions& options);

namespace hta {
class ImportedRows;
struct HtaResult;
}  // namespace hta

// The inputs opened as AnalyzeFiles and AnalyzeDistributed read them: Kineto
// files whole (their HTA rows taken from that pass into `imported`), the
// ranks cut to options.selection. Opening reads metadata and indexes only.
struct OpenedInputs {
  std::vector<std::string> kineto;  // the Kineto inputs, for HTA
  std::shared_ptr<hta::ImportedRows> imported;
  std::unique_ptr<TraceSource> source;
  // Where the source's reads put the profiler figures they carry (one
  // Ascend input), or null: for AnalyzeOptions::rank_reference.
  std::shared_ptr<RankReference> rank_reference;
};
OpenedInputs OpenInputs(const std::vector<std::string>& inputs, const AnalyzeOptions& options);

// HTA's figures of the selected ranks only (all when none is selected).
void KeepSelectedRanks(const TraceSelection& selection, hta::HtaResult* figures);

// Fills analysis->cluster_output from the first msprof-analyze
// cluster_analysis_output among (or inside) the inputs; warns of others.
void AddClusterOutputs(const std::vector<std::string>& inputs, analysis::Analysis* analysis);

}  // namespace moetrace
