// The INPUT... of `report` and `gate`: traces (analyzed here) or one
// document saved by `analyze --json` (loaded as is).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/mpi/communicator.h"
#include "analyzer/proto/analysis.pb.h"
#include "formats/trace_io.h"

namespace moetrace {

// True when `path` is a file whose first JSON key is one `analyze --json`
// writes first (keys are sorted: "cluster", else "hta_errors", "label_checks", "ranks"), not a
// Kineto trace ("traceEvents", "schemaVersion", ...).
bool IsAnalysisJson(const std::string& path);

struct LoadedInputs {
  analysis::Analysis analysis;
  // The traces, when the inputs were traces (ranks in input order); null
  // for a saved analysis. Reports read single ranks back from it.
  std::unique_ptr<TraceSource> trace;
};

// Opens and analyzes `inputs` the way `moetrace analyze` does (ranks of all
// inputs as one trace, HTA figures for Kineto inputs). Throws InputError.
// Collective over `comm` (AnalyzeDistributed): process 0 gets the result,
// the others an empty one.
LoadedInputs LoadInputs(const std::vector<std::string>& inputs, int threads,
                        std::function<void(size_t, size_t)> progress, Communicator& comm);

}  // namespace moetrace
