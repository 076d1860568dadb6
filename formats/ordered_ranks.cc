#include "formats/ordered_ranks.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace moetrace {

namespace {

// ForEachRankInOrder, and with `sink` each worker also encodes the ranks it
// reads with its own encoder (when the sink has them) and this thread
// appends them (AddEncoded; AddRank without encoders) before `consume`.
void RanksInOrder(const TraceSource& source, size_t threads, size_t window, TraceSink* sink,
                  const std::function<void(size_t, const Rank&)>& consume) {
  const size_t n = source.rank_count();
  threads = std::clamp<size_t>(threads, 1, std::max<size_t>(n, 1));
  window = std::max(window, threads);
  if (threads == 1) {
    Rank rank;
    for (size_t i = 0; i < n; ++i) {
      source.ReadRankInto(i, &rank);
      if (sink) sink->AddRank(rank);
      consume(i, rank);
    }
    return;
  }
  // One encoder per worker, made here (not on the workers: a sink need not
  // make them concurrently). None: the ranks are added on this thread.
  std::vector<std::unique_ptr<RankEncoder>> encoders(threads);
  if (sink) {
    for (auto& e : encoders) e = sink->CreateEncoder();
  }
  // Slot i % window holds rank i once read (and encoded); a worker takes
  // index i only when i < consumed + window, so a slot is free when it is
  // taken.
  struct Slot {
    Rank rank;
    std::unique_ptr<EncodedRank> encoded;
    bool ready = false;
  };
  std::vector<Slot> slots(window);
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0, consumed = 0;
  bool stop = false;  // the consumer failed
  // A rank that could not be read: the ranks before it are still consumed,
  // as a serial loop would, then its error is rethrown.
  size_t error_at = n;
  std::exception_ptr error;
  auto worker = [&](RankEncoder* encoder) {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < consumed + window; });
        if (stop || next >= std::min(n, error_at)) return;
        i = next++;
      }
      Slot& s = slots[i % window];
      try {
        source.ReadRankInto(i, &s.rank);
        if (encoder) s.encoded = encoder->Encode(s.rank, i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < error_at) {
          error_at = i;
          error = std::current_exception();
        }
        cv.notify_all();
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      s.ready = true;
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker, encoders[t].get());
  try {
    for (size_t i = 0; i < n; ++i) {
      Slot& s = slots[i % window];
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return s.ready || i >= error_at; });
        if (!s.ready) break;
      }
      if (s.encoded) {
        sink->AddEncoded(std::move(s.encoded));
      } else if (sink) {
        sink->AddRank(s.rank);
      }
      consume(i, s.rank);
      std::lock_guard<std::mutex> lock(mu);
      s.ready = false;
      ++consumed;
      cv.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu);
    error = std::current_exception();  // before any read error: it is consumed later
    error_at = 0;  // so that a rank still being read cannot replace it
    stop = true;
    cv.notify_all();
  }
  {
    // Workers waiting for room in the window would wait for ever.
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

void ForEachRankInOrder(const TraceSource& source, size_t threads, size_t window,
                        const std::function<void(size_t, const Rank&)>& consume) {
  RanksInOrder(source, threads, window, nullptr, consume);
}

void WriteRanksInOrder(const TraceSource& source, size_t threads, size_t window, TraceSink& sink,
                       const std::function<void(size_t, const Rank&)>& written) {
  RanksInOrder(source, threads, window, &sink, written);
}

}  // namespace moetrace
