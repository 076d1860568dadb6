// Reads the ranks of a source on worker threads and hands them to the
// caller's thread in index order (for writers that must append ranks in
// order: convert). At most `window` ranks are held at once, so memory stays
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

}  // namespace moetrace
