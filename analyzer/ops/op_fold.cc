#include "analyzer/ops/op_fold.h"

#include <algorithm>

namespace moetrace::ops {

static_assert(960 <= 1024, "LogHistogram::Bucket (at most 959) fits the hash key's 10 bits");

void OpFold::Begin(size_t n_names, size_t device_events) {
  n_names_ = n_names;
  folded_ = 0;
  rows.clear();
  streams.clear();
  shaped_.clear();
  name_rows.assign(n_names, NameRows{});
  // No fill: AddItems writes every slot of the streams it folds (kNoRow
  // for their events that are not busy ops), and only those are read.
  if (row_of.size() < device_events) row_of.resize(device_events);
  if (hused_ > 0 || hkey_.size() != (size_t{1} << 10)) {
    shift_ = 64 - 10;  // 1024 slots
    hkey_.assign(size_t{1} << 10, kEmpty);
    hcount_.assign(hkey_.size(), 0);
  }
  hused_ = 0;
}

// A name id past the string table (a hostile file) grows the tables.
void OpFold::GrowNames(StringId name) {
  n_names_ = static_cast<size_t>(name) + 1;
  name_rows.resize(n_names_);
}

int32_t OpFold::NewRow(StringId name, StringId shape, uint8_t group, int64_t first_dur) {
  const auto h = static_cast<int32_t>(rows.size());
  FoldRow& row = rows.emplace_back();
  row.name = name;
  row.shape = shape;
  row.group = group;
  const uint32_t b = LogHistogram::Bucket(first_dur);
  row.hist_lo = b > kWindowBelow ? b - kWindowBelow : 0;
  if (shape == 0) name_rows[name].row[group] = h;
  return h;
}

void OpFold::Finish() {
  for (FoldRow& row : rows) {
    int64_t n = 0;
    for (uint32_t c : row.window) n += c;
    row.count += n;
  }
}

void OpFold::LaunchesByName(std::vector<NameLaunch>* out) const {
  out->assign(n_names_, NameLaunch{});
  for (const FoldRow& row : rows) {
    NameLaunch& l = (*out)[row.name];
    l.count += row.count - row.unlaunched;
    l.host += row.host;
    l.small += row.small;
    l.device += row.total - row.unlaunched_total;
    l.first = std::min(l.first, row.first_launch);
  }
}

int32_t OpFold::ShapedRow(StringId name, StringId shape, uint8_t group, int64_t first_dur) {
  auto [it, inserted] = shaped_.try_emplace((static_cast<uint64_t>(name) << 32) | shape, -1);
  int32_t h = it->second;
  while (h >= 0 && rows[static_cast<size_t>(h)].group != group) h = rows[static_cast<size_t>(h)].next;
  if (h >= 0) return h;
  h = NewRow(name, shape, group, first_dur);
  rows[static_cast<size_t>(h)].next = it->second;
  it->second = h;
  return h;
}

void OpFold::AddBucket(uint32_t row, uint32_t bucket, int64_t count) {
  const uint64_t key = (static_cast<uint64_t>(row) << 10) | bucket;
  size_t mask = hkey_.size() - 1;
  size_t slot = (key * 0x9E3779B97F4A7C15ull) >> shift_;
  while (hkey_[slot] != key && hkey_[slot] != kEmpty) slot = (slot + 1) & mask;
  if (hkey_[slot] == key) {
    hcount_[slot] += count;
    return;
  }
  hkey_[slot] = key;
  hcount_[slot] = count;
  if (++hused_ * 2 <= hkey_.size()) return;
  // Half full: double, rehash.
  std::vector<uint64_t> old_key = std::move(hkey_);
  std::vector<int64_t> old_count = std::move(hcount_);
  --shift_;
  hkey_.assign(old_key.size() * 2, kEmpty);
  hcount_.assign(hkey_.size(), 0);
  mask = hkey_.size() - 1;
  for (size_t i = 0; i < old_key.size(); ++i) {
    if (old_key[i] == kEmpty) continue;
    size_t s = (old_key[i] * 0x9E3779B97F4A7C15ull) >> shift_;
    while (hkey_[s] != kEmpty) s = (s + 1) & mask;
    hkey_[s] = old_key[i];
    hcount_[s] = old_count[i];
  }
}

void OpFold::SortedSpills(std::vector<std::pair<uint64_t, int64_t>>* out) const {
  out->clear();
  if (hused_ == 0) return;
  out->reserve(hused_);
  for (size_t i = 0; i < hkey_.size(); ++i) {
    if (hkey_[i] != kEmpty) out->emplace_back(hkey_[i], hcount_[i]);
  }
  std::sort(out->begin(), out->end());
}

void OpFold::AppendHistogram(uint32_t r, const std::vector<std::pair<uint64_t, int64_t>>& spills,
                             std::vector<std::pair<uint32_t, int64_t>>* out) const {
  const uint8_t* w = rows[r].window;
  const uint32_t lo = rows[r].hist_lo;
  // The row's spills, below, inside (wrapped counters) and above its
  // window, by bucket.
  auto it = std::lower_bound(spills.begin(), spills.end(),
                             std::pair<uint64_t, int64_t>(static_cast<uint64_t>(r) << 10, 0));
  auto end = spills.end();
  auto row_spill = [&] { return it != end && (it->first >> 10) == r; };
  while (row_spill() && (it->first & 1023) < lo) {
    out->emplace_back(static_cast<uint32_t>(it->first & 1023), it->second);
    ++it;
  }
  for (uint32_t o = 0; o < kWindow; ++o) {
    int64_t c = w[o];
    if (row_spill() && (it->first & 1023) == lo + o) {  // wrapped counters' 256s
      c += it->second;
      ++it;
    }
    if (c != 0) out->emplace_back(lo + o, c);
  }
  while (row_spill()) {
    out->emplace_back(static_cast<uint32_t>(it->first & 1023), it->second);
    ++it;
  }
}

}  // namespace moetrace::ops
