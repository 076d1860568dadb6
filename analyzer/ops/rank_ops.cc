#include "analyzer/ops/rank_ops.h"

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <unordered_map>

namespace moetrace::ops {
namespace {

static_assert(960 <= 1024, "LogHistogram::Bucket (at most 959) fits the table's 10 key bits");

// Nearest-rank percentile (k = ceil(p n), as analyzer/percentiles.h) of
// v[0, n), reordering v.
int64_t NearestRank(int64_t* v, size_t n, int num, int den) {
  if (n == 0) return 0;
  size_t k = (n * static_cast<size_t>(num) + static_cast<size_t>(den) - 1) / static_cast<size_t>(den);
  k = std::clamp<size_t>(k, 1, n) - 1;
  std::nth_element(v, v + k, v + n);
  return v[k];
}

}  // namespace

std::string_view OperatorType(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  // Digits after an underscore, and something before it.
  if (end < name.size() && end >= 2 && name[end - 1] == '_') return name.substr(0, end - 1);
  return name;
}

RankOps SummarizeOps(const Rank& rank, const RankMetrics& m, const RankScratch& scratch,
                     OpsScratch* s) {
  RankOps out;
  out.steps = static_cast<int32_t>(m.steps.size());
  const size_t n_names = rank.strings.size();
  s->head.assign(n_names, -1);
  s->next.clear();
  s->name_class.assign(n_names, -1);
  s->dispatch_of.assign(n_names, -1);
  const size_t n = m.op_records;
  if (s->row_of.size() < n) s->row_of.resize(n);
  const OpRecord* rec = scratch.op_records.data();
  std::vector<OpRow>& rows = out.rows;
  std::vector<uint8_t> row_group;
  // A name id past the string table (a hostile file) grows the table.
  auto name_slot = []<typename T>(std::vector<T>& v, StringId id, std::type_identity_t<T> fill) -> T& {
    if (id >= v.size()) v.resize(static_cast<size_t>(id) + 1, fill);
    return v[id];
  };

  // The dispatch row of a name: one per operator type, found once per name.
  std::unordered_map<std::string_view, int32_t> type_row;
  auto dispatch_row = [&](StringId name) -> size_t {
    int32_t& d = name_slot(s->dispatch_of, name, -1);
    if (d < 0) {
      const std::string_view type = OperatorType(name < n_names ? rank.strings.Get(name) : "");
      auto [it, added] = type_row.try_emplace(type, static_cast<int32_t>(out.dispatch.size()));
      if (added) {
        DispatchRow row;
        row.name = name;
        row.type_len = static_cast<uint32_t>(type.size());
        out.dispatch.push_back(row);
      }
      d = it->second;
    }
    return static_cast<size_t>(d);
  };

  // (row, bucket) counts: open addressing, multiplicative hash.
  constexpr uint64_t kEmpty = ~0ull;
  std::vector<uint64_t>& hkey = s->hkey;
  std::vector<int64_t>& hcount = s->hcount;
  int shift = 64 - 10;  // 1024 slots
  hkey.assign(size_t{1} << 10, kEmpty);
  hcount.assign(hkey.size(), 0);
  size_t mask = hkey.size() - 1, used = 0;
  auto grow = [&] {
    std::vector<uint64_t> old_key = std::move(hkey);
    std::vector<int64_t> old_count = std::move(hcount);
    --shift;
    hkey.assign(old_key.size() * 2, kEmpty);
    hcount.assign(hkey.size(), 0);
    mask = hkey.size() - 1;
    for (size_t i = 0; i < old_key.size(); ++i) {
      if (old_key[i] == kEmpty) continue;
      size_t slot = (old_key[i] * 0x9E3779B97F4A7C15ull) >> shift;
      while (hkey[slot] != kEmpty) slot = (slot + 1) & mask;
      hkey[slot] = old_key[i];
      hcount[slot] = old_count[i];
    }
  };

  // Pass 1: each op to its row (name, shape, group), counts and totals; the
  // launch join by name.
  for (size_t k = 0; k < n; ++k) {
    const OpRecord& r = rec[k];
    int32_t& head = name_slot(s->head, r.name, -1);
    int32_t h = head;
    while (h >= 0 && (rows[h].shape != r.shape || row_group[h] != r.group)) h = s->next[h];
    if (h < 0) {
      ViewClass cls;
      if (r.group == kGroupCompute) {
        int8_t& c = name_slot(s->name_class, r.name, int8_t{-1});
        if (c < 0) c = static_cast<int8_t>(ClassOf(r.group, r.name < n_names ? rank.strings.Get(r.name) : ""));
        cls = static_cast<ViewClass>(c);
      } else {
        cls = ClassOf(r.group, "");
      }
      h = static_cast<int32_t>(rows.size());
      OpRow& row = rows.emplace_back();
      row.name = r.name;
      row.shape = r.shape;
      row.cls = cls;
      row_group.push_back(r.group);
      s->next.push_back(head);
      head = h;
    }
    s->row_of[k] = static_cast<uint32_t>(h);
    const int64_t dur = std::max<TimeNs>(r.dur, 0);
    OpRow& row = rows[static_cast<size_t>(h)];
    if (row.count == 0 || dur < row.min) row.min = dur;
    row.max = std::max(row.max, dur);
    row.count += 1;
    row.total += dur;
    {
      const uint64_t key = (static_cast<uint64_t>(h) << 10) | LogHistogram::Bucket(dur);
      size_t slot = (key * 0x9E3779B97F4A7C15ull) >> shift;
      while (hkey[slot] != key && hkey[slot] != kEmpty) slot = (slot + 1) & mask;
      if (hkey[slot] == kEmpty) {
        hkey[slot] = key;
        hcount[slot] = 0;
        if (++used * 2 > hkey.size()) grow();
        // grow() moved the entries: find the key again.
        slot = (key * 0x9E3779B97F4A7C15ull) >> shift;
        while (hkey[slot] != key) slot = (slot + 1) & mask;
      }
      ++hcount[slot];
    }
    if (r.host >= 0) {
      DispatchRow& dr = out.dispatch[dispatch_row(r.name)];
      dr.count += 1;
      dr.host_ns += r.host;
      dr.small += dur < r.host;
      dr.device_ns += dur;
    }
  }
  for (const WaitShare& w : m.host_bound_by_op) out.dispatch[dispatch_row(w.name)].host_bound_ns += w.ns;
  for (const OpRow& row : rows) {
    out.class_count[static_cast<int>(row.cls)] += row.count;
    out.class_total[static_cast<int>(row.cls)] += row.total;
  }
  for (StringId id = 0; id < s->head.size(); ++id) out.distinct_names += s->head[id] >= 0;

  // The rows by total; exact percentiles of the rows kept, from their
  // durations gathered in one more pass over the records.
  const size_t R = rows.size();
  std::vector<uint32_t> order(R);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const OpRow &x = rows[a], &y = rows[b];
    if (x.total != y.total) return x.total > y.total;
    if (x.cls != y.cls) return x.cls < y.cls;
    if (x.name != y.name) return x.name < y.name;
    return x.shape < y.shape;
  });
  const size_t kept = std::min(R, kRankTopRows);
  std::vector<int32_t> kept_of(R, -1);
  if (s->kept.size() < kept) s->kept.resize(kept);
  // A row of one duration (most of a generated trace's) needs no pass.
  bool gather = false;
  for (size_t r = 0; r < kept; ++r) {
    OpRow& row = rows[order[r]];
    s->kept[r].clear();
    if (row.min == row.max) {
      row.p50 = row.p99 = row.min;
    } else {
      kept_of[order[r]] = static_cast<int32_t>(r);
      gather = true;
    }
  }
  for (size_t k = 0; gather && k < n; ++k) {
    const int32_t slot = kept_of[s->row_of[k]];
    if (slot >= 0) s->kept[static_cast<size_t>(slot)].push_back(std::max<TimeNs>(rec[k].dur, 0));
  }
  for (size_t r = 0; r < kept; ++r) {
    std::vector<int64_t>& v = s->kept[r];
    if (v.empty()) continue;
    rows[order[r]].p50 = NearestRank(v.data(), v.size(), 1, 2);
    rows[order[r]].p99 = NearestRank(v.data(), v.size(), 99, 100);
  }
  // The histograms, by row then bucket.
  std::vector<uint32_t> rank_of(R);
  for (size_t r = 0; r < R; ++r) rank_of[order[r]] = static_cast<uint32_t>(r);
  struct Entry { uint64_t key; int64_t count; };  // key: (rank in `order`, bucket)
  std::vector<Entry> entries;
  entries.reserve(used);
  for (size_t i = 0; i < hkey.size(); ++i) {
    if (hkey[i] == kEmpty) continue;
    entries.push_back({(static_cast<uint64_t>(rank_of[hkey[i] >> 10]) << 10) | (hkey[i] & 1023), hcount[i]});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  out.buckets.reserve(entries.size());
  size_t e = 0;
  for (size_t r = 0; r < R; ++r) {
    OpRow& row = rows[order[r]];
    row.hist_begin = static_cast<uint32_t>(out.buckets.size());
    for (; e < entries.size() && (entries[e].key >> 10) == r; ++e) {
      out.buckets.emplace_back(static_cast<uint32_t>(entries[e].key & 1023), entries[e].count);
    }
    row.hist_end = static_cast<uint32_t>(out.buckets.size());
  }
  std::vector<OpRow> sorted_rows;
  sorted_rows.reserve(R);
  for (uint32_t h : order) sorted_rows.push_back(std::move(rows[h]));
  rows = std::move(sorted_rows);

  std::sort(out.dispatch.begin(), out.dispatch.end(), [](const DispatchRow& a, const DispatchRow& b) {
    if (a.host_bound_ns != b.host_bound_ns) return a.host_bound_ns > b.host_bound_ns;
    if (a.host_ns != b.host_ns) return a.host_ns > b.host_ns;
    return a.name < b.name;
  });
  return out;
}

}  // namespace moetrace::ops
