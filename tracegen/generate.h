// moetrace generate: config -> engine -> ranks streamed into a TraceSink,
// metadata (full RunConfig, layout, ground truth) written at Finish.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/trace_io.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {

// Seconds spent per phase; the per-rank phases are summed over workers.
struct GenerateTimes {
  double simulate = 0;  // pass 1 (wall)
  double emit = 0;      // pass 2: EmitRank
  double labels = 0;    // GroundTruthLabels + FindMemoryPeak
  double encode = 0;    // the sink's encoder (native: columns + zstd), off the writer
  double write = 0;     // the writer thread in the sink (AddRank / AddEncoded)
  double total = 0;     // wall, Simulate to Finish
};

struct GenerateSummary {
  int ranks = 0;
  int64_t events = 0;
  std::vector<std::string> warnings;  // e.g. out of memory, with peak and holder
  GenerateTimes times;
};

// `ranks` empty = every rank. Pass 2 runs on `threads` threads (0: one per
// core); the sink receives the ranks in the order of `ranks` and the output
// is the same for any thread count. `progress(done, total)` is called on the
// calling thread after each rank reaches the sink, done = 1, 2, ...
// An exception from the engine, the labels or the sink propagates (the
// first in rank order) after every thread has stopped.
GenerateSummary Generate(const RunConfig& config, const std::vector<int32_t>& ranks,
                         TraceSink& sink,
                         const std::function<void(int, int)>& progress = {}, int threads = 0);

// "0-7,64" -> {0..7, 64}; sorted, unique; InputError naming --ranks when a
// rank is out of [0, world) or the spec is malformed.
std::vector<int32_t> ParseRankSpec(std::string_view spec, int world);

}  // namespace moetrace::tracegen
