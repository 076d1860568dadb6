#include "analyzer/collective_table.h"

namespace moetrace {

CollectiveAgg* CollectiveTable::Find(uint64_t key) {
  // At most 7/8 full: consecutive sequences never collide (each has its own
  // slot), so the fill only lengthens the probes of sparse sequences.
  if ((size_ + 1) * 8 > slots_.size() * 7) Grow();
  const size_t n = slots_.size();
  for (size_t i = Slot(key);;) {
    CollectiveAgg& c = slots_[i];
    if (c.members == 0) {
      // Claimed by the caller's fold (which sets members >= 1).
      c.key = key;
      ++size_;
      return &c;
    }
    if (c.key == key) return &c;
    if (++i == n) i = 0;
  }
}

void CollectiveTable::Reserve(size_t n) {
  size_t capacity = slots_.size();
  if ((size_ + n) * 8 <= capacity * 7) return;
  // Odd capacities: sequences with a power-of-two stride (a PP pair's
  // send / recv, numbered by micro-batch and stage) still spread over every
  // slot. From 47, the capacities (95, 191, 383, 767, 1,535, ...) sit just
  // above 1.4 times the powers of two that group sizes tend to be: a group of
  // 1,024 collectives fills 67% of its table, not 50%.
  do {
    capacity = capacity == 0 ? 47 : capacity * 2 + 1;
  } while ((size_ + n) * 8 > capacity * 7);
  Rehash(capacity);
}

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
