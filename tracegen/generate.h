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

// Seconds per phase: wall, or CPU time (not inflated by other processes on
// the cores), the per-rank phases summed over the threads.
struct GenerateTimes {
  double simulate = 0, simulate_cpu = 0;  // pass 1
  double emit = 0;    // CPU, pass 2: EmitRank
  double labels = 0;  // CPU, GroundTruthLabels + FindMemoryPeak
  double encode = 0;  // CPU, the sink's encoder (native: columns + zstd), off the writer
  double write = 0;   // CPU, the writer thread in the sink (AddRank / AddEncoded, Finish)
  double write_wall = 0;  // wall, the same (AddRank / AddEncoded): includes waiting for the disk
  double total = 0, total_cpu = 0;  // the whole Generate
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
// `pass1`: pass 1's results from SimulatePass1 of the same config (another
// process's, under mpirun), loaded instead of simulating; empty: simulated
// here. The output is the same either way.
// An RL config (rl.algorithm non-empty) goes to rl::GenerateRl
// (rl/rl_generate.h): `ranks` are then cards and `pass1` is unused.
GenerateSummary Generate(const RunConfig& config, const std::vector<int32_t>& ranks,
                         TraceSink& sink,
                         const std::function<void(int, int)>& progress = {}, int threads = 0,
                         std::string_view pass1 = {});

// Pass 1 of `config` on `threads` threads (0: one per core), as bytes for
// Generate's `pass1` (Engine::SavePass1).
std::string SimulatePass1(const RunConfig& config, int threads = 0);

// "0-7,64" -> {0..7, 64}; sorted, unique; InputError naming --ranks when a
// rank is out of [0, world) or the spec is malformed.
std::vector<int32_t> ParseRankSpec(std::string_view spec, int world);

}  // namespace moetrace::tracegen
