#include "analyzer/collective_table.h"

namespace moetrace {

CollectiveAgg* CollectiveTable::Find(uint64_t key) {
  if (slots_.empty()) Grow();
  for (;;) {
    // At most 7/8 full (so a probe always meets an empty slot): consecutive
    // sequences never collide (each has its own slot), so the fill only
    // lengthens the probes of sparse sequences.
    const size_t n = slots_.size();
    size_t i = Slot(key);
    while (slots_[i].members != 0) {
      if (slots_[i].key == key) return &slots_[i];
      if (++i == n) i = 0;
    }
    // Absent. Only an insertion grows the table: a group's table, sized
    // for its first member, serves the other members' lookups as it is.
    if ((size_ + 1) * 8 <= n * 7) {
      slots_[i].key = key;  // claimed by the caller's fold (members >= 1)
      ++size_;
      return &slots_[i];
    }
    Grow();
  }
}

void CollectiveTable::Reserve(size_t n) {
  size_t capacity = slots_.size();
  if ((size_ + n) * 8 <= capacity * 7) return;
  // Odd capacities: sequences with a power-of-two stride (a PP pair's
  // send / recv, numbered by micro-batch and stage) still spread over every
  // slot.
  if (capacity == 0) {
    // Sized once for a group's first member, 7/8 full: its 1,024 TP or 256
    // PP collectives take 1,171 or 293 slots (the doubling below from 47
    // would give 1,535 and 383: 80 MB more on the 718B trace).
    capacity = ((n * 8 + 6) / 7) | 1;
  } else {
    do {
      capacity = capacity * 2 + 1;
    } while ((size_ + n) * 8 > capacity * 7);
  }
  Rehash(capacity);
}

void CollectiveTable::Grow() { Rehash(slots_.empty() ? 47 : slots_.size() * 2 + 1); }

void CollectiveTable::Rehash(size_t n) {
  std::vector<CollectiveAgg> old;
  old.swap(slots_);
  slots_.resize(n);
  for (const CollectiveAgg& c : old) {
    if (c.members == 0) continue;
    size_t i = Slot(c.key);
    while (slots_[i].members != 0) {
      if (++i == n) i = 0;
    }
    slots_[i] = c;
  }
}

}  // namespace moetrace
