#include "analyzer/collective_table.h"

namespace moetrace {

CollectiveAgg* CollectiveTable::Find(uint64_t key, uint64_t hash) {
  // At most 3/4 full: linear probes stay short.
  if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>(hash >> shift_);; i = (i + 1) & mask) {
    CollectiveAgg& c = slots_[i];
    if (c.members == 0) {
      // Claimed by the caller's fold (which sets members >= 1).
      c.key = key;
      ++size_;
      return &c;
    }
    if (c.key == key) return &c;
  }
}

void CollectiveTable::Grow() {
  std::vector<CollectiveAgg> old;
  old.swap(slots_);
  const size_t n = old.empty() ? 1024 : old.size() * 2;
  shift_ = 64;
  for (size_t s = n; s > 1; s >>= 1) --shift_;
  slots_.resize(n);
  const size_t mask = n - 1;
  for (const CollectiveAgg& c : old) {
    if (c.members == 0) continue;
    size_t i = static_cast<size_t>(Hash(c.key) >> shift_);
    while (slots_[i].members != 0) i = (i + 1) & mask;
    slots_[i] = c;
  }
}

}  // namespace moetrace
