// Streaming exporter to the Chrome trace-event JSON format (.json), readable
// by chrome://tracing, ui.perfetto.dev and moetrace's own Kineto importer.
//
// {"traceEvents":[...], "displayTimeUnit":"ns", "otherData":{...}}:
// - pid = rank id; tid = the track's native id (thread / stream id), or its
//   index when it has none or another track of the rank already uses it;
// - "X" complete events (µs with 3 decimals, exact), "i" for zero-length ones,
//   "C" counters, "M" process/thread names and sort order;
// - "cat" follows Kineto's vocabulary (kernel, gpu_memcpy, gpu_memset,
//   cuda_runtime, cpu_op, user_annotation, cuda_sync) so Kineto tooling reads
//   the file, while args.category keeps moetrace's exact category; args carry
//   phase, step, layer, micro_batch, correlation, flops, bytes and the
//   communication record;
// - "s"/"f" flow events ("ac2g", "bp":"e") from the last launch of each
//   correlation to its device op.
// AddRank writes the rank's events straight to the output file; the metadata
// goes to otherData at Finish.
#pragma once

#include <memory>
#include <string>

#include "formats/trace_io.h"

namespace moetrace {

// Throws InputError when `path` cannot be created. The file appears only when
// Finish() succeeds.
std::unique_ptr<TraceSink> CreateChromeJsonSink(const std::string& path);

}  // namespace moetrace
