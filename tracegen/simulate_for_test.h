// tiny-moe generated in memory with `sets` (--set key=value) applied, for
// the tracegen tests that inspect a simulated trace.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::tracegen {

inline Trace SimulateTinyMoe(std::vector<std::string> sets, std::vector<int32_t> ranks = {}) {
  RunConfig c = BuildConfig({"tiny-moe", "", std::move(sets), 0});
  MemorySink sink;
  Generate(c, ranks, sink);
  return std::move(sink.trace());
}

}  // namespace moetrace::tracegen
