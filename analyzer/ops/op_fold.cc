#include "analyzer/ops/op_fold.h"

namespace moetrace::ops {

static_assert(960 <= 1024, "LogHistogram::Bucket (at most 959) fits the table's 10 key bits");

void OpFold::Begin(size_t n_names, size_t device_events) {
  head.assign(n_names, -1);
  rows.clear();
  shaped_.clear();
  launch.assign(n_names, NameLaunch{});
  // Non-busy events keep kNoRow: every slot is written here, so a stale
  // row id of the previous rank cannot be read.
  row_of.assign(device_events, kNoRow);
  shift_ = 64 - 10;  // 1024 slots
  hkey.assign(size_t{1} << 10, kEmpty);
  hcount.assign(hkey.size(), 0);
  hused = 0;
  seq_ = 0;
}

// A name id past the string table (a hostile file) grows the tables.
void OpFold::GrowNames(StringId name) {
  head.resize(static_cast<size_t>(name) + 1, -1);
  launch.resize(static_cast<size_t>(name) + 1);
}

int32_t OpFold::NewRow(StringId name, StringId shape, uint8_t group) {
  const auto h = static_cast<int32_t>(rows.size());
  FoldRow& row = rows.emplace_back();
  row.name = name;
  row.shape = shape;
  row.group = group;
  if (shape == 0) {
    row.next = head[name];
    head[name] = h;
  }
  return h;
}

int32_t OpFold::ShapedRow(StringId name, StringId shape, uint8_t group) {
  auto [it, inserted] = shaped_.try_emplace((static_cast<uint64_t>(name) << 32) | shape, -1);
  int32_t h = it->second;
  while (h >= 0 && rows[static_cast<size_t>(h)].group != group) h = rows[static_cast<size_t>(h)].next;
  if (h >= 0) return h;
  h = NewRow(name, shape, group);
  rows[static_cast<size_t>(h)].next = it->second;
  it->second = h;
  return h;
}

void OpFold::AddBucket(uint32_t row, uint32_t bucket, int64_t count) {
  const uint64_t key = (static_cast<uint64_t>(row) << 10) | bucket;
  size_t mask = hkey.size() - 1;
  size_t slot = (key * 0x9E3779B97F4A7C15ull) >> shift_;
  while (hkey[slot] != key && hkey[slot] != kEmpty) slot = (slot + 1) & mask;
  if (hkey[slot] == key) {
    hcount[slot] += count;
    return;
  }
  hkey[slot] = key;
  hcount[slot] = count;
  if (++hused * 2 <= hkey.size()) return;
  // Half full: double, rehash.
  std::vector<uint64_t> old_key = std::move(hkey);
  std::vector<int64_t> old_count = std::move(hcount);
  --shift_;
  hkey.assign(old_key.size() * 2, kEmpty);
  hcount.assign(hkey.size(), 0);
  mask = hkey.size() - 1;
  for (size_t i = 0; i < old_key.size(); ++i) {
    if (old_key[i] == kEmpty) continue;
    size_t s = (old_key[i] * 0x9E3779B97F4A7C15ull) >> shift_;
    while (hkey[s] != kEmpty) s = (s + 1) & mask;
    hkey[s] = old_key[i];
    hcount[s] = old_count[i];
  }
}

void OpFold::Finish() {
  for (size_t r = 0; r < rows.size(); ++r) {
    FoldRow& row = rows[r];
    if (row.run_count > 0) AddBucket(static_cast<uint32_t>(r), row.run_bucket, row.run_count);
    row.run_count = 0;
  }
}

}  // namespace moetrace::ops
