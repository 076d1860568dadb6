// A flat open-addressing map from a collective's key (group id, sequence)
// to what its members contributed so far. ClusterAccumulator keeps millions
// of these (every collective of every rank of a 6,144-rank step): a node per
// entry (std::unordered_map) cost a malloc per collective, a pointer chase
// per lookup and a free per entry at exit; here entries lie in one array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moetrace {

// One matched collective; its op name is an id of ClusterAccumulator's name
// table, so that folding a member copies no string.
struct CollectiveAgg {
  uint64_t key = 0;
  int64_t sum_dur = 0;
  int64_t min_dur = INT64_MAX;
  int64_t load_sum = 0, load_max = 0;
  int32_t members = 0;  // 0: the slot is empty
  int32_t group_size = 0;
  int32_t last_rank = -1;
  int32_t name_rank = -1;  // the member whose op name / layer / step is kept
  uint32_t name = 0;
  int32_t layer = -1, step = -1;
  int32_t load_n = 0;
  bool a2a = false, combine = false;
};

class CollectiveTable {
 public:
  // The entry of `key`, inserted empty (members 0) when absent. The pointer
  // holds until the next Find of an absent key.
  CollectiveAgg* Find(uint64_t key, uint64_t hash);
  size_t size() const { return size_; }
  // Starts loading the slot of `hash` into the cache: the table is far
  // larger than the cache, so each Find would otherwise wait for memory.
  // Callers prefetch a few arrivals ahead to overlap those waits.
  void Prefetch(uint64_t hash) const {
    if (slots_.empty()) return;
    const char* slot = reinterpret_cast<const char*>(&slots_[static_cast<size_t>(hash >> shift_)]);
    __builtin_prefetch(slot);
    __builtin_prefetch(slot + sizeof(CollectiveAgg) - 1);  // it may straddle two lines
  }
  // Every entry, in slot order (which depends on insertion order: callers
  // that need a stable order sort).
  template <typename F>
  void ForEach(F&& f) const {
    for (const CollectiveAgg& c : slots_) {
      if (c.members != 0) f(c);
    }
  }
  // Fibonacci hashing: consecutive sequences spread over all the slots.
  static uint64_t Hash(uint64_t key) { return key * 0x9E3779B97F4A7C15ull; }

 private:
  void Grow();
  std::vector<CollectiveAgg> slots_;
  size_t size_ = 0;
  int shift_ = 64;  // slot of a hash: its top (64 - shift_) bits
};

}  // namespace moetrace
