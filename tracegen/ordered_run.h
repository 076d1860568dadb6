// Runs numbered jobs on worker threads and hands their results to the
// calling thread strictly in job order, with a bounded number in flight.
#pragma once

#include <cstddef>
#include <functional>

namespace moetrace::tracegen {

// produce(worker, i) runs for i = 0..n-1 on `threads` threads (worker in
// [0, threads)); consume(i) runs on the calling thread for i = 0, 1, ...,
// each after produce(i) returned. At most `window` jobs are in flight
// (started and not yet consumed), so the caller may keep job i's result in
// slot i % window of an array of `window`. threads <= 1 runs everything on
// the calling thread (produce(0, i) then consume(i)).
// An exception from produce(i) is rethrown in place of consume(i); one from
// consume stops the run. Either way no new job starts, the threads are
// joined, and the first exception in job order propagates.
void RunOrdered(size_t n, int threads, size_t window,
                const std::function<void(int, size_t)>& produce,
                const std::function<void(size_t)>& consume);

}  // namespace moetrace::tracegen
