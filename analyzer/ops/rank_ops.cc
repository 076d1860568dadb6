#include "analyzer/ops/rank_ops.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <numeric>
#include <string_view>
#include <type_traits>

namespace moetrace::ops {

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
  const OpFold& fold = scratch.op_fold;
  const size_t n_names = rank.strings.size();
  s->name_class.assign(n_names, -1);
  s->dispatch_of.assign(n_names, -1);
  std::vector<OpRow>& rows = out.rows;
  // A name id past the string table (a hostile file) grows the table.
  auto name_slot = []<typename T>(std::vector<T>& v, StringId id, std::type_identity_t<T> fill) -> T& {
    if (id >= v.size()) v.resize(static_cast<size_t>(id) + 1, fill);
    return v[id];
  };

  // The dispatch row of a name: one per operator type, found once per name.
  // Types are at most the launched and host-bound names: the table is
  // sized to stay under half full.
  std::vector<NameLaunch>& by_name = s->launch_by_name;
  fold.LaunchesByName(&by_name);
  size_t typed = m.host_bound_by_op.size();
  for (const NameLaunch& l : by_name) typed += l.count > 0;
  size_t slots = 16;
  while (slots < 2 * typed) slots *= 2;
  s->type_slot.assign(slots, -1);
  auto type_of = [&](const DispatchRow& d) {
    return d.name < n_names ? rank.strings.Get(d.name).substr(0, d.type_len) : std::string_view();
  };
  auto dispatch_row = [&](StringId name) -> size_t {
    int32_t& d = name_slot(s->dispatch_of, name, -1);
    if (d < 0) {
      const std::string_view type = OperatorType(name < n_names ? rank.strings.Get(name) : "");
      size_t at = std::hash<std::string_view>{}(type) & (slots - 1);
      while (s->type_slot[at] >= 0 && type_of(out.dispatch[static_cast<size_t>(s->type_slot[at])]) != type) {
        at = (at + 1) & (slots - 1);
      }
      if (s->type_slot[at] < 0) {
        s->type_slot[at] = static_cast<int32_t>(out.dispatch.size());
        DispatchRow row;
        row.name = name;
        row.type_len = static_cast<uint32_t>(type.size());
        out.dispatch.push_back(row);
      }
      d = s->type_slot[at];
    }
    return static_cast<size_t>(d);
  };

  // The rows the sweep folded, classed once per name, counted once per name.
  const size_t R = fold.rows.size();
  s->named.assign(n_names, 0);
  std::vector<OpRow>& folded = s->folded;
  folded.assign(R, OpRow{});
  for (size_t h = 0; h < R; ++h) {
    const FoldRow& f = fold.rows[h];
    OpRow& row = folded[h];
    row.name = f.name;
    row.shape = f.shape;
    if (f.group == kGroupCompute) {
      int8_t& c = name_slot(s->name_class, f.name, int8_t{-1});
      if (c < 0) c = static_cast<int8_t>(ClassOf(f.group, f.name < n_names ? rank.strings.Get(f.name) : ""));
      row.cls = static_cast<ViewClass>(c);
    } else {
      row.cls = ClassOf(f.group, "");
    }
    row.count = f.count;
    row.total = f.total;
    row.min = f.min;
    row.max = f.max;
    out.class_count[static_cast<int>(row.cls)] += row.count;
    out.class_total[static_cast<int>(row.cls)] += row.total;
    uint8_t& named = name_slot(s->named, f.name, uint8_t{0});
    out.distinct_names += named == 0;
    named = 1;
  }
  // The launch join by name, folded into operator types; a type's row is
  // named by its first name seen in op order (as one pass over the ops would).
  std::vector<std::pair<uint64_t, StringId>>& launched = s->launched;
  launched.clear();
  for (StringId id = 0; id < by_name.size(); ++id) {
    if (by_name[id].count > 0) launched.emplace_back(by_name[id].first, id);
  }
  std::sort(launched.begin(), launched.end());
  for (const auto& [first, id] : launched) {
    const NameLaunch& l = by_name[id];
    DispatchRow& dr = out.dispatch[dispatch_row(id)];
    dr.count += l.count;
    dr.host_ns += l.host;
    dr.small += l.small;
    dr.device_ns += l.device;
  }
  for (const WaitShare& w : m.host_bound_by_op) out.dispatch[dispatch_row(w.name)].host_bound_ns += w.ns;

  // The rows by total, each with its histogram (by row, then bucket).
  std::vector<uint32_t>& order = s->order;
  order.resize(R);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const OpRow &x = folded[a], &y = folded[b];
    if (x.total != y.total) return x.total > y.total;
    if (x.cls != y.cls) return x.cls < y.cls;
    if (x.name != y.name) return x.name < y.name;
    return x.shape < y.shape;
  });
  fold.SortedSpills(&s->spills);
  rows.reserve(R);
  out.buckets.reserve(R + fold.spilled());
  for (uint32_t h : order) {
    OpRow& row = rows.emplace_back(folded[h]);
    row.hist_begin = static_cast<uint32_t>(out.buckets.size());
    fold.AppendHistogram(h, s->spills, &out.buckets);
    row.hist_end = static_cast<uint32_t>(out.buckets.size());
  }

  // Exact p50 / p99 of the rows kept. The row's exact log histogram names
  // the bucket holding each nearest rank: a bucket of one value (below 16
  // ns, or the rank is the row's min or max) gives it outright; otherwise
  // one pass over the device events keeps only that bucket's durations of
  // the row, and the rank is found among them (nth_element over a few, not
  // over every duration of the row).
  struct Want {
    // The bucket's values [lo, last] within the row's [min, max]; empty by
    // default: the gather tests every duration against every Want, and a
    // known percentile's Want must count none (its spare slot is one wide).
    int64_t lo = 0, last = -1;
    bool gather = false;  // false: the percentile is known without a gather
    size_t k = 0;            // 0-based rank within the bucket
    size_t at = 0, n = 0;    // its durations: s->kept_buf[at, at + n)
  };
  const size_t kept = std::min(R, kRankTopRows);
  Want want[kRankTopRows][2];
  std::vector<int32_t>& kept_of = s->kept_of;
  kept_of.assign(R, -1);
  size_t buf_size = 0;
  bool gather = false;
  // Durations of the gathered buckets, and ops of their rows (once per
  // percentile): which gather loop is cheaper.
  size_t in_buckets = 0, of_rows = 0;
  static constexpr int kNum[2] = {1, 99}, kDen[2] = {2, 100};
  for (size_t r = 0; r < kept; ++r) {
    OpRow& row = rows[r];
    int64_t* result[2] = {&row.p50, &row.p99};
    const size_t n = static_cast<size_t>(row.count);
    for (int p = 0; p < 2; ++p) {
      want[r][p] = Want{};
      size_t k = (n * static_cast<size_t>(kNum[p]) + static_cast<size_t>(kDen[p]) - 1) /
                 static_cast<size_t>(kDen[p]);
      k = std::clamp<size_t>(k, 1, n);  // 1-based
      if (row.min == row.max || k == 1 || k == n) {
        *result[p] = k == n ? row.max : row.min;
        continue;
      }
      size_t seen = 0;
      for (uint32_t e = row.hist_begin; e < row.hist_end; ++e) {
        const auto [b, c] = out.buckets[e];
        if (seen + static_cast<size_t>(c) < k) {
          seen += static_cast<size_t>(c);
          continue;
        }
        const int64_t lo = std::max(LogHistogram::BucketLow(b), row.min);
        const int64_t last = std::min(LogHistogram::BucketLast(b), row.max);
        if (last == lo) {
          *result[p] = lo;
        } else {
          // The bucket's count is known: room for exactly its values, and
          // one slot past them for the branch-free gather's writes.
          want[r][p] = Want{lo, last, true, k - seen - 1, buf_size, 0};
          buf_size += static_cast<size_t>(c) + 1;
          in_buckets += static_cast<size_t>(c);
          of_rows += n;
          kept_of[order[r]] = static_cast<int32_t>(r);
          gather = true;
        }
        break;
      }
    }
  }
  // The device events in the sweep's numbering (stream by stream, table
  // order); the order within a bucket does not change the rank. When the
  // buckets hold a large share of their rows' ops (a row of a few close
  // durations: the test is a coin toss), every duration of a kept row is
  // written and kept only when in its bucket, with no branch; a percentile
  // known already writes to one spare slot, never kept. That loop's
  // counters go through memory (a store and a load per percentile per op):
  // when the buckets hold under 1/8 of their rows' ops (durations spread
  // over many buckets, as analyze_bench's), a branch that is mostly not
  // taken is cheaper. Both keep the same durations in the same order.
  for (size_t r = 0; r < kept; ++r) {
    for (Want& w : want[r]) {
      if (!w.gather) w.at = buf_size;
    }
  }
  if (s->kept_buf.size() < buf_size + 1) s->kept_buf.resize(buf_size + 1);
  int64_t* buf = s->kept_buf.data();
  // Only the streams that hold a gathered row: a kept comm row's durations
  // are not looked for on the compute streams.
  uint64_t need = 0;
  for (size_t r = 0; r < kept; ++r) {
    if (kept_of[order[r]] >= 0) need |= fold.rows[order[r]].streams;
  }
  const bool sparse = in_buckets * 8 < of_rows;
  // The sparse loop's test: one unsigned compare, d - lo <= last - lo, not
  // taken for most ops (d >= lo alone is a coin toss at p50). A known
  // percentile's range is empty: d - (2^64 - 1) = d + 1 > 0 for every d >= 0.
  struct Range {
    uint64_t lo = ~0ull, span = 0;
  };
  Range range[kRankTopRows][2];
  for (size_t r = 0; r < kept; ++r) {
    for (int p = 0; p < 2; ++p) {
      const Want& w = want[r][p];
      if (w.gather) range[r][p] = {static_cast<uint64_t>(w.lo), static_cast<uint64_t>(w.last - w.lo)};
    }
  }
  // A stream whose events are all ops of one row (a comm or copy stream,
  // analyze_bench's streams) is gathered without reading the row ids: its
  // row is the only one marked on it, when the marks do not alias (at most
  // 64 streams).
  // One pass over the rows: by stream mark, the only row marked (-1: none
  // or several).
  int32_t only_row[64];
  std::fill(only_row, only_row + 64, -2);
  if (gather && fold.streams.size() <= 64) {
    for (size_t h = 0; h < R; ++h) {
      for (uint64_t m = fold.rows[h].streams; m != 0; m &= m - 1) {
        int32_t& o = only_row[std::countr_zero(m)];
        o = o == -2 ? static_cast<int32_t>(h) : -1;
      }
    }
  }
  auto single_row = [&](size_t k) -> int32_t {
    if (fold.streams.size() > 64 || !fold.streams[k].all_busy) return -1;
    return std::max(only_row[k], -1);
  };
  for (size_t k = 0; gather && k < fold.streams.size(); ++k) {
    if ((need >> (k % 64) & 1) == 0) continue;
    const OpFold::Stream& st = fold.streams[k];
    const Track& track = rank.tracks[st.track];
    const TimeNs* dur = track.events.dur.data();
    const uint32_t* row_of = fold.row_of.data() + st.base;
    const size_t n_ev = track.events.size();
    if (const int32_t only = single_row(k); only >= 0) {
      const int32_t slot = kept_of[static_cast<size_t>(only)];
      if (slot < 0) continue;
      const Range g0 = range[slot][0], g1 = range[slot][1];
      Want& w0 = want[slot][0];
      Want& w1 = want[slot][1];
      int64_t* out0 = buf + w0.at + w0.n;
      int64_t* out1 = buf + w1.at + w1.n;
      size_t n0 = 0, n1 = 0;
      if (sparse) {
        for (size_t i = 0; i < n_ev; ++i) {
          const int64_t d = std::max<TimeNs>(dur[i], 0);
          if (static_cast<uint64_t>(d) - g0.lo <= g0.span) [[unlikely]] out0[n0++] = d;
          if (static_cast<uint64_t>(d) - g1.lo <= g1.span) [[unlikely]] out1[n1++] = d;
        }
      } else {
        // Branch-free: every duration written, kept when in range (a known
        // percentile's range is empty and its slot one wide).
        for (size_t i = 0; i < n_ev; ++i) {
          const int64_t d = std::max<TimeNs>(dur[i], 0);
          out0[n0] = d;
          n0 += static_cast<uint64_t>(d) - g0.lo <= g0.span;
          out1[n1] = d;
          n1 += static_cast<uint64_t>(d) - g1.lo <= g1.span;
        }
      }
      w0.n += n0;
      w1.n += n1;
      continue;
    }
    if (sparse) {
      for (size_t i = 0; i < n_ev; ++i) {
        if (row_of[i] == OpFold::kNoRow) continue;
        const int32_t slot = kept_of[row_of[i]];
        if (slot < 0) continue;
        const int64_t d = std::max<TimeNs>(dur[i], 0);
        for (int p = 0; p < 2; ++p) {
          const Range& g = range[slot][p];
          if (static_cast<uint64_t>(d) - g.lo <= g.span) [[unlikely]] {
            Want& w = want[slot][p];
            buf[w.at + w.n++] = d;
          }
        }
      }
      continue;
    }
    for (size_t i = 0; i < n_ev; ++i) {
      if (row_of[i] == OpFold::kNoRow) continue;
      const int32_t slot = kept_of[row_of[i]];
      if (slot < 0) continue;
      const int64_t d = std::max<TimeNs>(dur[i], 0);
      for (int p = 0; p < 2; ++p) {
        Want& w = want[slot][p];
        buf[w.at + w.n] = d;
        w.n += static_cast<size_t>((d >= w.lo) & (d <= w.last));
      }
    }
  }
  for (size_t r = 0; gather && r < kept; ++r) {
    int64_t* result[2] = {&rows[r].p50, &rows[r].p99};
    for (int p = 0; p < 2; ++p) {
      const Want& w = want[r][p];
      if (!w.gather || w.n == 0) continue;
      int64_t* v = buf + w.at;
      const size_t k = std::min(w.k, w.n - 1);
      std::nth_element(v, v + k, v + w.n);
      *result[p] = v[k];
    }
  }

  std::sort(out.dispatch.begin(), out.dispatch.end(), [](const DispatchRow& a, const DispatchRow& b) {
    if (a.host_bound_ns != b.host_bound_ns) return a.host_bound_ns > b.host_bound_ns;
    if (a.host_ns != b.host_ns) return a.host_ns > b.host_ns;
    return a.name < b.name;
  });
  return out;
}

}  // namespace moetrace::ops
