// A map from int64 keys (correlation ids, row indices) to small dense ids,
// open addressing in two flat arrays: the HTA figures look up one key per
// row, and a node-based std::unordered_map spent most of their time in
// malloc/free. Ids are handed out in insertion order (0, 1, 2, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace moetrace::hta {

class FlatIdMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit FlatIdMap(size_t expected = 0) { Rehash(Capacity(expected)); }

  // The id of `key`; kNone when absent.
  uint32_t Find(int64_t key) const {
    for (size_t s = Slot(key);; s = (s + 1) & mask_) {
      if (ids_[s] == kNone) return kNone;
      if (keys_[s] == key) return ids_[s];
    }
  }
  // The id of `key`, giving it the next id (size() before the call) when new.
  uint32_t Insert(int64_t key, bool* added = nullptr) {
    if ((size_ + 1) * 2 > ids_.size()) Rehash(ids_.size() * 2);
    for (size_t s = Slot(key);; s = (s + 1) & mask_) {
      if (ids_[s] == kNone) {
        keys_[s] = key;
        ids_[s] = static_cast<uint32_t>(size_++);
        if (added) *added = true;
        return ids_[s];
      }
      if (keys_[s] == key) {
        if (added) *added = false;
        return ids_[s];
      }
    }
  }
  size_t size() const { return size_; }

 private:
  static size_t Capacity(size_t expected) {
    size_t c = 16;
    while (c < expected * 2) c *= 2;
    return c;
  }
  size_t Slot(int64_t key) const {
    uint64_t h = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  void Rehash(size_t capacity) {
    std::vector<int64_t> keys = std::move(keys_);
    std::vector<uint32_t> ids = std::move(ids_);
    keys_.assign(capacity, 0);
    ids_.assign(capacity, kNone);
    mask_ = capacity - 1;
    for (size_t s = 0; s < ids.size(); ++s) {
      if (ids[s] == kNone) continue;
      size_t t = Slot(keys[s]);
      while (ids_[t] != kNone) t = (t + 1) & mask_;
      keys_[t] = keys[s];
      ids_[t] = ids[s];
    }
  }

  std::vector<int64_t> keys_;
  std::vector<uint32_t> ids_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// Rows bucketed by a dense id, each bucket in the order rows were added
// (a flat replacement for vector<vector<uint32_t>>).
struct Buckets {
  std::vector<uint32_t> begin;  // bucket b is rows[begin[b], begin[b + 1])
  std::vector<uint32_t> rows;
  // `id_of[k]` is the bucket of `items[k]`; `n` the number of buckets.
  static Buckets Build(const std::vector<uint32_t>& items, const std::vector<uint32_t>& id_of,
                       size_t n) {
    Buckets b;
    b.begin.assign(n + 1, 0);
    for (uint32_t id : id_of) ++b.begin[id + 1];
    for (size_t i = 0; i < n; ++i) b.begin[i + 1] += b.begin[i];
    std::vector<uint32_t> at(b.begin.begin(), b.begin.end() - 1);
    b.rows.resize(items.size());
    for (size_t k = 0; k < items.size(); ++k) b.rows[at[id_of[k]]++] = items[k];
    return b;
  }
  size_t size() const { return begin.empty() ? 0 : begin.size() - 1; }
};

}  // namespace moetrace::hta
