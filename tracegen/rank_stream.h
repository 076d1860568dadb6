// The ordered path from emitted ranks to a sink, shared by pre-training
// (generate.cc) and RL (rl/rl_generate.cc): ranks are emitted on worker
// threads, labelled, checked against HBM, encoded off the writer, and handed
// to the sink strictly in the order asked, with a bounded number in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "formats/trace.h"
#include "formats/trace_io.h"
#include "tracegen/generate.h"

namespace moetrace::tracegen {

// Emits rank `r` into *out (overwritten); one per worker thread.
using RankEmitFn = std::function<void(int32_t r, Rank* out)>;

struct StreamOptions {
  int threads = 1;             // workers (at most one per rank)
  double hbm_bytes = 0;        // a rank whose allocated peak exceeds it is warned about
  bool rank_labels = true;     // GroundTruthLabels of each rank into the metadata
};

// Runs `ranks` through `make_emitter()` (called once per worker, on the
// calling thread) into `sink`, then sink.Finish(*meta). Labels, OOM
// attributes, counts and CPU times go to *meta and *summary; progress as in
// Generate.
void StreamRanks(const std::vector<int32_t>& ranks, const std::function<RankEmitFn()>& make_emitter,
                 const StreamOptions& options, TraceSink& sink, Metadata* meta,
                 GenerateSummary* summary, const std::function<void(int, int)>& progress);

// CPU seconds of the calling thread / the process (phases in CPU time are
// not inflated when other processes share the cores).
double ThreadCpuSeconds();
double ProcessCpuSeconds();

}  // namespace moetrace::tracegen
