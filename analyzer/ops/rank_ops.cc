#include "analyzer/ops/rank_ops.h"

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <unordered_map>

namespace moetrace::ops {
namespace {

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

  // The rows the sweep folded, classed once each.
  rows.resize(fold.rows.size());
  for (size_t h = 0; h < fold.rows.size(); ++h) {
    const FoldRow& f = fold.rows[h];
    OpRow& row = rows[h];
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
  }
  // The launch join by name, folded into operator types; a type's row is
  // named by its first name seen in op order (as one pass over the ops would).
  std::vector<std::pair<uint64_t, StringId>> launched;
  for (StringId id = 0; id < fold.launch.size(); ++id) {
    if (fold.launch[id].count > 0) launched.emplace_back(fold.launch[id].first, id);
  }
  std::sort(launched.begin(), launched.end());
  for (const auto& [first, id] : launched) {
    const NameLaunch& l = fold.launch[id];
    DispatchRow& dr = out.dispatch[dispatch_row(id)];
    dr.count += l.count;
    dr.host_ns += l.host;
    dr.small += l.small;
    dr.device_ns += l.device;
  }
  for (const WaitShare& w : m.host_bound_by_op) out.dispatch[dispatch_row(w.name)].host_bound_ns += w.ns;
  for (const OpRow& row : rows) {
    out.class_count[static_cast<int>(row.cls)] += row.count;
    out.class_total[static_cast<int>(row.cls)] += row.total;
  }
  {
    // Names with a row (unshaped rows are on head[], shaped ones hashed).
    std::vector<bool> named(fold.head.size(), false);
    for (const FoldRow& row : fold.rows) {
      if (row.name < named.size() && !named[row.name]) {
        named[row.name] = true;
        ++out.distinct_names;
      }
    }
  }

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
  // The device events in the sweep's numbering (track by track, table
  // order); the order within a row does not change its percentiles.
  size_t base = 0;
  for (size_t t = 0; gather && t < rank.tracks.size(); ++t) {
    const Track& track = rank.tracks[t];
    if (track.kind != TrackKind::kDeviceStream) continue;
    const TimeNs* dur = track.events.dur.data();
    const uint32_t* row_of = fold.row_of.data() + base;
    const size_t n_ev = track.events.size();
    base += n_ev;
    for (size_t i = 0; i < n_ev; ++i) {
      if (row_of[i] == OpFold::kNoRow) continue;
      const int32_t slot = kept_of[row_of[i]];
      if (slot >= 0) s->kept[static_cast<size_t>(slot)].push_back(std::max<TimeNs>(dur[i], 0));
    }
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
  entries.reserve(fold.hused);
  for (size_t i = 0; i < fold.hkey.size(); ++i) {
    const uint64_t key = fold.hkey[i];
    if (key == OpFold::kEmpty) continue;
    entries.push_back({(static_cast<uint64_t>(rank_of[key >> 10]) << 10) | (key & 1023), fold.hcount[i]});
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
