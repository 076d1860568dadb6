#include "analyzer/ops/rank_ops.h"

#include <algorithm>
#include <numeric>
#include <type_traits>

namespace moetrace::ops {
namespace {

constexpr size_t kBuckets = 960;  // LogHistogram::Bucket of INT64_MAX is 959

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
    rows[h].count += 1;
    rows[h].total += dur;
    if (r.host >= 0) {
      int32_t& d = name_slot(s->dispatch_of, r.name, -1);
      if (d < 0) {
        d = static_cast<int32_t>(out.dispatch.size());
        out.dispatch.push_back({r.name});
      }
      DispatchRow& dr = out.dispatch[static_cast<size_t>(d)];
      dr.count += 1;
      dr.host_ns += r.host;
      dr.small += dur < r.host;
      dr.device_ns += dur;
    }
  }
  for (const WaitShare& w : m.host_bound_by_op) {
    int32_t& d = name_slot(s->dispatch_of, w.name, -1);
    if (d < 0) {
      d = static_cast<int32_t>(out.dispatch.size());
      out.dispatch.push_back({w.name});
    }
    out.dispatch[static_cast<size_t>(d)].host_bound_ns += w.ns;
  }
  for (const OpRow& row : rows) {
    out.class_count[static_cast<int>(row.cls)] += row.count;
    out.class_total[static_cast<int>(row.cls)] += row.total;
  }
  for (StringId id = 0; id < s->head.size(); ++id) out.distinct_names += s->head[id] >= 0;

  // Pass 2: durations grouped by row (a counting sort), then each row's
  // histogram and, for the rows kept, exact percentiles.
  const size_t R = rows.size();
  s->offset.assign(R + 1, 0);
  for (size_t h = 0; h < R; ++h) s->offset[h + 1] = s->offset[h] + rows[h].count;
  if (s->sorted.size() < n) s->sorted.resize(n);
  {
    std::vector<int64_t> fill(s->offset.begin(), s->offset.end() - 1);
    for (size_t k = 0; k < n; ++k) s->sorted[static_cast<size_t>(fill[s->row_of[k]]++)] = std::max<TimeNs>(rec[k].dur, 0);
  }
  std::vector<uint32_t> order(R);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const OpRow &x = rows[a], &y = rows[b];
    if (x.total != y.total) return x.total > y.total;
    if (x.cls != y.cls) return x.cls < y.cls;
    if (x.name != y.name) return x.name < y.name;
    return x.shape < y.shape;
  });
  s->bucket_count.assign(kBuckets, 0);
  std::vector<std::pair<uint32_t, int64_t>> pairs;
  for (size_t h = 0; h < R; ++h) {
    int64_t* v = s->sorted.data() + s->offset[h];
    const size_t c = static_cast<size_t>(rows[h].count);
    int64_t lo = v[0], hi = v[0];
    s->touched.clear();
    for (size_t i = 0; i < c; ++i) {
      const uint32_t b = LogHistogram::Bucket(v[i]);
      if (s->bucket_count[b]++ == 0) s->touched.push_back(b);
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
    std::sort(s->touched.begin(), s->touched.end());
    pairs.clear();
    for (uint32_t b : s->touched) {
      pairs.emplace_back(b, s->bucket_count[b]);
      s->bucket_count[b] = 0;
    }
    rows[h].hist.AddBuckets(pairs, lo, hi);
  }
  for (size_t r = 0; r < std::min(R, kRankTopRows); ++r) {
    const uint32_t h = order[r];
    int64_t* v = s->sorted.data() + s->offset[h];
    const size_t c = static_cast<size_t>(rows[h].count);
    rows[h].p50 = NearestRank(v, c, 1, 2);
    rows[h].p99 = NearestRank(v, c, 99, 100);
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
