// Reads the ranks of a source on worker threads and hands them to the
// caller's thread in index order (for writers that must append ranks in
// order: convert), optionally encoding them for a sink on the workers. At most `window` ranks are held at once, so memory stays
// bounded by the ranks in flight, whatever the rank count.
#pragma once

#include <cstddef>
#include <functional>

#include "formats/trace_io.h"

namespace moetrace {

// Calls `consume(index, rank)` for every rank of `source`, in index order,
// on the calling thread, while up to `threads` workers read ahead (at most
// `window` ranks read and not yet consumed). The first exception, from a
// read or from `consume`, stops the workers and is rethrown.
void ForEachRankInOrder(const TraceSource& source, size_t threads, size_t window,
                        const std::function<void(size_t, const Rank&)>& consume);

// The same, appending every rank to `sink` in index order before
// `written(index, rank)`: when the sink has encoders (the native writer),
// each worker encodes the ranks it reads (compression off this thread) and
// this thread appends them; else this thread calls AddRank. The output is
// the sink's AddRank of each rank in order, whatever `threads`.
void WriteRanksInOrder(const TraceSource& source, size_t threads, size_t window, TraceSink& sink,
                       const std::function<void(size_t, const Rank&)>& written);

}  // namespace moetrace
