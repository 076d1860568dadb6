// L(b) per correlation id for AnalyzeRank's passes (rank_metrics.cc,
// pass_one.cc): the latest end among a rank's kLaunch host events, the
// threads that issued them, their summed launch time. Dense while the ids
// are compact (the usual case), a hash map otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "analyzer/item_bits.h"
#include "analyzer/rank_metrics.h"
#include "formats/trace.h"

namespace moetrace::rank_pass {

// A first light pass over the host threads finds the range of correlation
// ids (AddIds); the dense table is indexed by id - min, so adding and
// finding are one indexed access.
class LaunchTable {
 public:
  using Threads = RankScratch::LaunchThreads;
  // Sizes the table for the rank's host threads' correlation ids, in `s`'s
  // buffers.
  LaunchTable(const Rank& rank, RankScratch* s);

  // `dur`: the launch call's own duration (the operator view's host time).
  void Add(int64_t corr, TimeNs end, TimeNs dur, int32_t thread) {
    if (sparse_) [[unlikely]] {
      AddSparse(corr, end, dur, thread);
      return;
    }
    const uint64_t k = static_cast<uint64_t>(corr - base_);
    EndHost& e = end_[k];
    Threads& th = threads_[k];
    e.host += dur;
    if (th.first < 0) th.first = thread;
    const uint64_t key = EndKey(end);
    if (key >= e.end_key) {
      e.end_key = key;
      th.last = thread;
    }
  }

  // Prefetches the slot of `corr`: L(b) only (the device pass), or with
  // its threads (the host pass).
  void Prefetch(int64_t corr) const {
    const uint64_t k = static_cast<uint64_t>(corr) - static_cast<uint64_t>(base_);
    if (k < size_) __builtin_prefetch(end_ + k);
  }
  void PrefetchAll(int64_t corr) const {
    const uint64_t k = static_cast<uint64_t>(corr) - static_cast<uint64_t>(base_);
    if (k < size_) {
      __builtin_prefetch(end_ + k, 1);
      __builtin_prefetch(threads_ + k, 1);
    }
  }

  // L(b), or kNoTime when the op has no launch; `*th` gets the threads of
  // its first and of its latest launch event (read only when needed: host
  // waits are rare, the ends are what the device pass streams through).
  // `*host` gets the summed duration of its launch events (when found).
  TimeNs Find(int64_t corr, const Threads** th, TimeNs* host) const {
    if (!sparse_) {
      // Unsigned: huge (absent) when corr < base_, no overflow on hostile ids.
      const uint64_t k = static_cast<uint64_t>(corr) - static_cast<uint64_t>(base_);
      if (k >= size_) {
        *th = &kNoThreads;
        return kNoTime;
      }
      *th = threads_ + k;
      *host = end_[k].host;
      return EndOfKey(end_[k].end_key);
    }
    auto it = corr < 0 ? map_.end() : map_.find(corr);
    if (it == map_.end()) {
      *th = &kNoThreads;
      return kNoTime;
    }
    *th = &it->second.threads;
    *host = it->second.host;
    return it->second.end;
  }

 private:
  struct Slot {
    TimeNs end;
    TimeNs host;
    Threads threads;
  };
  // A dense slot's end as an unsigned key in the same order, kNoTime (the
  // smallest time) being 0: an empty slot is all zero.
  static uint64_t EndKey(TimeNs t) { return static_cast<uint64_t>(t) ^ (uint64_t{1} << 63); }
  static TimeNs EndOfKey(uint64_t k) { return static_cast<TimeNs>(k ^ (uint64_t{1} << 63)); }
  void AddSparse(int64_t corr, TimeNs end, TimeNs dur, int32_t thread);
  static constexpr Threads kNoThreads{-1, -1};
  using EndHost = RankScratch::LaunchEnd;
  RankScratch* s_;
  EndHost* end_ = nullptr;
  Threads* threads_ = nullptr;
  int64_t base_ = 0;
  uint64_t size_ = 0;
  bool sparse_ = false;
  std::unordered_map<int64_t, Slot> map_;
};

}  // namespace moetrace::rank_pass
