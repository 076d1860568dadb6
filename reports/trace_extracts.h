// What a report needs from the trace itself (not in the analysis): a
// timeline excerpt of one step of one rank and the memory counters of a
// rank; and the tokens-per-expert matrix of the heat map, from the analysis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "formats/trace.h"
#include "formats/trace_io.h"

namespace moetrace {

struct Interval {
  TimeNs start, end;
  std::string label;  // the longest op's name in a merged run (from the trace)
};

struct Timeline {
  int32_t rank = 0;
  int32_t step = -1;
  TimeNs start = 0, end = 0;
  // Lanes: compute, communication, copy, host wait. Intervals are merged
  // when closer than 1/`resolution` of the window (bounded output).
  std::vector<Interval> lanes[4];
};
inline constexpr const char* kTimelineLaneNames[4] = {"compute", "communication", "copy", "host wait"};

// The worst (longest) step of the rank with the longest mean step.
// Returns false when the analysis names no such step.
bool PickWorstStep(const analysis::Analysis& a, int32_t* rank, int32_t* step, TimeNs* start,
                   TimeNs* end);

// Device ops of `rank` in [start, end) by lane, plus host waits (gaps on a
// stream where the op's launch ended after the previous op: METRICS.md).
Timeline ExtractTimeline(const Rank& rank, TimeNs start, TimeNs end, int resolution = 1200);

struct MemorySeries {
  int32_t rank = 0;
  std::vector<std::pair<TimeNs, double>> allocated, reserved;  // downsampled, peaks kept
};
MemorySeries ExtractMemory(const Rank& rank, size_t max_points = 600);

struct ExpertLoads {
  // tokens[layer_index][expert], summed over ranks, steps and micro-batches.
  std::vector<int32_t> layers;
  std::vector<std::vector<int64_t>> tokens;
};
// The layers' tokens per expert as the analysis gives them
// (ExpertLayer.tokens). Empty without routing records.
ExpertLoads ExpertLoadsOf(const analysis::ExpertImbalance& ei);

// Reads the rank whose id is `rank` into `out`; false when absent.
bool ReadRankById(const TraceSource& source, const analysis::Analysis& a, int32_t rank, Rank* out);

}  // namespace moetrace
