// The matched collectives of one communication group, by sequence number.
// ClusterAccumulator keeps millions of these (every collective of every rank
// of a 6,144-rank step) in one table per group. A group's members see its
// collectives in sequence order and sequences are mostly consecutive, so a
// member's arrivals land on consecutive slots (seq mod capacity): memory is
// read in order and the hardware prefetcher hides it. One table for all
// groups, hashed, cost a cache and TLB miss per arrival (17-20% of `analyze`
// on the 718B trace: the members of a collective arrive hundreds of ranks
// apart, its slot long gone cold, and a rank's ~1,900 arrivals were spread
// over ~1,900 pages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moetrace {

// Keys of collectives: group id << 40 ^ sequence (the low 40 bits).
constexpr uint64_t kCollectiveSequenceMask = (1ull << 40) - 1;

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
  int32_t layer = -1, step = -1;
  int32_t load_n = 0;
  // The flags share a word with the name id (72 bytes an entry, not 80:
  // millions of entries). Name ids are far below 2^30.
  uint32_t name : 30 = 0;
  uint32_t a2a : 1 = 0, combine : 1 = 0;
};
static_assert(sizeof(CollectiveAgg) == 72);

class CollectiveTable {
 public:
  // The entry of `key`, inserted empty (members 0) when absent. Every key of
  // one table has the same group bits. The pointer holds until the next Find
  // of an absent key.
  CollectiveAgg* Find(uint64_t key);
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  // Makes room for `n` more keys at once (a group's first member brings all
  // of the group's collectives: one table of the final size, not a chain of
  // copies through every smaller one).
  void Reserve(size_t n);
  // Every entry, in slot order (which depends on insertion order: callers
  // that need a stable order sort).
  template <typename F>
  void ForEach(F&& f) const {
    for (const CollectiveAgg& c : slots_) {
      if (c.members != 0) f(c);
    }
  }

 private:
  void Grow();
  void Rehash(size_t capacity);
  size_t Slot(uint64_t key) const {
    return static_cast<size_t>((key & kCollectiveSequenceMask) % slots_.size());
  }
  std::vector<CollectiveAgg> slots_;
  size_t size_ = 0;
};

}  // namespace moetrace
