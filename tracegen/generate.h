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

struct GenerateSummary {
  int ranks = 0;
  int64_t events = 0;
  std::vector<std::string> warnings;  // e.g. out of memory, with peak and holder
};

// `ranks` empty = every rank. `progress(done, total)` is called after each rank.
GenerateSummary Generate(const RunConfig& config, const std::vector<int32_t>& ranks,
                         TraceSink& sink,
                         const std::function<void(int, int)>& progress = {});

// "0-7,64" -> {0..7, 64}; sorted, unique; InputError naming --ranks when a
// rank is out of [0, world) or the spec is malformed.
std::vector<int32_t> ParseRankSpec(std::string_view spec, int world);

}  // namespace moetrace::tracegen
