#include "tracegen/labels.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/core.h>

namespace moetrace::tracegen {
namespace {

using Interval = std::pair<TimeNs, TimeNs>;

// Sorts and merges in place into disjoint, non-empty, ordered intervals;
// returns the total length. Every list is normalized once: the per-step
// figures then come from linear sweeps over sorted lists, never a re-sort.
TimeNs Merge(std::vector<Interval>& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  size_t w = 0;
  TimeNs total = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].second <= v[i].first) continue;
    if (w > 0 && v[i].first <= v[w - 1].second) {
      v[w - 1].second = std::max(v[w - 1].second, v[i].second);
    } else {
      v[w++] = v[i];
    }
  }
  v.resize(w);
  for (auto& [a, b] : v) total += b - a;
  return total;
}

TimeNs Length(const std::vector<Interval>& v) {
  TimeNs total = 0;
  for (auto& [a, b] : v) total += b - a;
  return total;
}

// Union of two normalized lists (see Merge), itself normalized.
void Union(const std::vector<Interval>& a, const std::vector<Interval>& b,
           std::vector<Interval>* out) {
  out->clear();
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& x = (j == b.size() || (i < a.size() && a[i].first <= b[j].first)) ? a[i++] : b[j++];
    if (!out->empty() && x.first <= out->back().second) out->back().second = std::max(out->back().second, x.second);
    else out->push_back(x);
  }
}

// Length of the union of two normalized lists, without building it.
TimeNs UnionLen(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  size_t i = 0, j = 0;
  TimeNs total = 0, cur0 = 0, cur1 = 0;
  bool open = false;
  while (i < a.size() || j < b.size()) {
    const Interval& x = (j == b.size() || (i < a.size() && a[i].first <= b[j].first)) ? a[i++] : b[j++];
    if (open && x.first <= cur1) {
      cur1 = std::max(cur1, x.second);
    } else {
      if (open) total += cur1 - cur0;
      cur0 = x.first;
      cur1 = x.second;
      open = true;
    }
  }
  if (open) total += cur1 - cur0;
  return total;
}

// The part of a normalized list inside [w0, w1) (stays normalized).
void Clip(const std::vector<Interval>& in, TimeNs w0, TimeNs w1, std::vector<Interval>* out) {
  out->clear();
  auto it = std::partition_point(in.begin(), in.end(), [&](const Interval& v) { return v.second <= w0; });
  for (; it != in.end() && it->first < w1; ++it) {
    TimeNs a = std::max(it->first, w0), b = std::min(it->second, w1);
    if (b > a) out->emplace_back(a, b);
  }
}

double MaxVio(const std::vector<double>& loads) {
  if (loads.empty()) return 0;
  double sum = 0, mx = 0;
  for (double v : loads) {
    sum += v;
    mx = std::max(mx, v);
  }
  double mean = sum / loads.size();
  return mean > 0 ? mx / mean - 1 : 0;
}

}  // namespace

std::vector<StepBreakdown> ComputeBreakdown(const Rank& rank) {
  // Device ops by class, and step windows.
  std::vector<Interval> compute, comm, copy, pp_recv;
  std::array<std::vector<Interval>, kCommClassCount> by_class;
  std::map<int32_t, std::pair<TimeNs, TimeNs>> steps;  // step -> (first start, last end)
  std::pair<TimeNs, TimeNs>* window = nullptr;  // std::map nodes are stable
  int32_t window_step = 0;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    const EventTable& e = t.events;
    for (size_t i = 0; i < e.size(); ++i) {
      Interval iv{e.ts[i], e.End(i)};
      switch (e.category[i]) {
        case Category::kCompute: compute.push_back(iv); break;
        case Category::kCollective:
        case Category::kP2P: {
          comm.push_back(iv);
          if (e.comm[i] >= 0) {
            const CommRecord& c = t.comms[e.comm[i]];
            by_class[int(c.comm_class)].push_back(iv);
            if (e.category[i] == Category::kP2P && c.kind == CollectiveKind::kRecv) pp_recv.push_back(iv);
          } else {
            by_class[0].push_back(iv);
          }
          break;
        }
        case Category::kCopy: copy.push_back(iv); break;
        default: continue;
      }
      // Consecutive events mostly share a step: look the map up on change only.
      if (!window || e.step[i] != window_step) {
        window_step = e.step[i];
        auto [it, fresh] = steps.try_emplace(window_step, iv.first, iv.second);
        window = &it->second;
        if (fresh) continue;
      }
      window->first = std::min(window->first, iv.first);
      window->second = std::max(window->second, iv.second);
    }
  }
  // Host waits: for each device stream, gaps between consecutive ops where
  // the op was issued (L(b) = latest end of its kLaunch events) after the gap began.
  // correlation -> L(b) (latest launch end), as a sorted vector: one entry
  // per launch event, no per-entry allocation.
  std::vector<std::pair<int64_t, TimeNs>> launches;
  std::vector<TimeNs> sync_ends;
  std::vector<size_t> runs;  // end of each thread's run in `launches`
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kHostThread) continue;
    const EventTable& e = t.events;
    const size_t run_start = launches.size();
    for (size_t i = 0; i < e.size(); ++i) {
      if (e.category[i] == Category::kLaunch && e.correlation[i] >= 0) {
        launches.emplace_back(e.correlation[i], e.End(i));
      } else if (e.category[i] == Category::kSync) {
        sync_ends.push_back(e.End(i));
      }
    }
    if (!std::is_sorted(launches.begin() + run_start, launches.end()))
      std::sort(launches.begin() + run_start, launches.end());
    runs.push_back(launches.size());
  }
  // Each host thread issues in correlation order: merge the per-thread
  // sorted runs (std::sort on the concatenation degrades to heapsort).
  for (size_t k = 1; k < runs.size(); ++k)
    std::inplace_merge(launches.begin(), launches.begin() + runs[k - 1], launches.begin() + runs[k]);
  if (!std::is_sorted(launches.begin(), launches.end())) std::sort(launches.begin(), launches.end());
  std::vector<std::pair<int64_t, TimeNs>> issued_l;  // max end per correlation
  issued_l.reserve(launches.size());
  for (const auto& [c, end] : launches) {
    if (!issued_l.empty() && issued_l.back().first == c) issued_l.back().second = std::max(issued_l.back().second, end);
    else issued_l.emplace_back(c, end);
  }
  // A stream's ops are mostly issued in correlation order: look a few
  // entries past the previous hit before falling back to a binary search.
  auto issued_at = [&](int64_t corr, size_t& hint) -> const TimeNs* {
    const size_t n = issued_l.size();
    size_t i = hint < n && issued_l[hint].first <= corr ? hint : 0;
    const size_t stop = std::min(n, i + 8);
    while (i < stop && issued_l[i].first < corr) ++i;
    if (i == stop && i < n)
      i = size_t(std::lower_bound(issued_l.begin() + i, issued_l.end(),
                                  std::pair<int64_t, TimeNs>{corr, std::numeric_limits<TimeNs>::min()}) -
                 issued_l.begin());
    hint = i;
    return i < n && issued_l[i].first == corr ? &issued_l[i].second : nullptr;
  };
  std::sort(sync_ends.begin(), sync_ends.end());
  std::vector<Interval> waits, sync_waits;
  std::vector<size_t> idx;
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kDeviceStream) continue;
    const EventTable& e = t.events;
    idx.clear();
    size_t hint = 0;
    for (size_t i = 0; i < e.size(); ++i)
      if (e.category[i] != Category::kSync && e.category[i] != Category::kMarker) idx.push_back(i);
    auto by_ts = [&](size_t a, size_t b) { return e.ts[a] < e.ts[b]; };
    if (!std::is_sorted(idx.begin(), idx.end(), by_ts)) std::stable_sort(idx.begin(), idx.end(), by_ts);
    for (size_t k = 1; k < idx.size(); ++k) {
      size_t a = idx[k - 1], b = idx[k];
      TimeNs end_a = e.End(a);
      if (e.ts[b] <= end_a) continue;
      const TimeNs* issued = issued_at(e.correlation[b], hint);
      if (!issued || *issued <= end_a) continue;
      TimeNs l = *issued;
      Interval w{end_a, std::min(e.ts[b], l)};
      waits.push_back(w);
      auto s = std::lower_bound(sync_ends.begin(), sync_ends.end(), end_a);
      if (s != sync_ends.end() && *s < l) sync_waits.push_back(w);
    }
  }
  // Memory counter.
  const Track* alloc = nullptr;
  for (const Track& t : rank.tracks)
    if (t.kind == TrackKind::kCounter && t.counter == CounterKind::kMemAllocated) alloc = &t;
  // Routing per step: layer -> tokens per expert (summed over micro-batches).
  std::map<int32_t, std::map<int32_t, const RoutingRecord*>> first_record;
  std::map<std::pair<int32_t, int32_t>, std::vector<double>> loads;
  std::map<std::pair<int32_t, int32_t>, const RoutingRecord*> proto;
  std::map<std::pair<int32_t, int32_t>, std::vector<double>> copy_tokens;
  for (const RoutingRecord& r : rank.routing) {
    auto& v = loads[{r.step, r.layer}];
    if (v.size() < r.tokens_per_expert.size()) v.resize(r.tokens_per_expert.size(), 0);
    for (size_t e = 0; e < r.tokens_per_expert.size(); ++e) v[e] += double(r.tokens_per_expert[e]);
    proto[{r.step, r.layer}] = &r;
    // Redundant copies: the same list, in the same order, in every record
    // of a (step, layer) (engine_routing.cc: Copies).
    if (!r.copy_tokens.empty()) {
      auto& c = copy_tokens[{r.step, r.layer}];
      if (c.size() < r.copy_tokens.size()) c.resize(r.copy_tokens.size(), 0);
      for (size_t k = 0; k < r.copy_tokens.size(); ++k) c[k] += double(r.copy_tokens[k]);
    }
  }

  Merge(compute);
  Merge(comm);
  Merge(copy);
  Merge(pp_recv);
  for (auto& v : by_class) Merge(v);
  Merge(waits);
  Merge(sync_waits);

  // Work of no step (RL rollout, scoring, switch) is in no step's window
  // when the rank has steps; it may only end a window early (below).
  std::vector<TimeNs> stepless;
  if (!steps.empty() && steps.rbegin()->first >= 0 && steps.begin()->first < 0) {
    while (steps.begin()->first < 0) steps.erase(steps.begin());
    for (const Track& t : rank.tracks) {
      if (t.kind != TrackKind::kDeviceStream) continue;
      const EventTable& e = t.events;
      for (size_t i = 0; i < e.size(); ++i) {
        const Category c = e.category[i];
        if (e.step[i] < 0 && (c == Category::kCompute || c == Category::kCollective ||
                              c == Category::kP2P || c == Category::kCopy))
          stepless.push_back(e.ts[i]);
      }
    }
    std::sort(stepless.begin(), stepless.end());
  }
  // METRICS.md's window runs to the next step's first op; it ends at the
  // step's own last op when work of no step starts in between (the
  // analyzer's rule, analyzer/README.md).
  auto stepless_in = [&](TimeNs lo, TimeNs hi) {
    auto p = std::lower_bound(stepless.begin(), stepless.end(), lo);
    return p != stepless.end() && *p < hi;
  };

  std::vector<StepBreakdown> out;
  std::vector<Interval> c_compute, c_comm, c_copy, c_recv, c_wait, c_sync, c_cls, busy, cc;
  for (auto it = steps.begin(); it != steps.end(); ++it) {
    StepBreakdown s;
    s.step = it->first;
    TimeNs w0 = it->second.first;
    auto next = std::next(it);
    TimeNs w1 = next == steps.end() ? it->second.second : next->second.first;
    if (next != steps.end() && it->second.second < w1 && stepless_in(it->second.second, w1))
      w1 = it->second.second;
    s.span = w1 - w0;
    Clip(compute, w0, w1, &c_compute);
    Clip(comm, w0, w1, &c_comm);
    Clip(copy, w0, w1, &c_copy);
    Clip(pp_recv, w0, w1, &c_recv);
    s.compute = Length(c_compute);
    s.comm = Length(c_comm);
    TimeNs comm_or_compute = UnionLen(c_compute, c_comm);
    s.comm_exposed = comm_or_compute - s.compute;
    s.comm_overlapped = s.comm - s.comm_exposed;
    Union(c_compute, c_comm, &cc);
    Union(cc, c_copy, &busy);
    TimeNs busy_len = Length(busy);
    s.copy_exposed = busy_len - comm_or_compute;
    s.free = s.span - busy_len;
    s.bubble = UnionLen(c_recv, c_compute) - s.compute;
    for (int k = 0; k < kCommClassCount; ++k) {
      Clip(by_class[k], w0, w1, &c_cls);
      s.class_total[k] = Length(c_cls);
      s.class_exposed[k] = UnionLen(c_cls, c_compute) - s.compute;
    }
    Clip(waits, w0, w1, &c_wait);
    Clip(sync_waits, w0, w1, &c_sync);
    // |H ∩ Free| = |H ∪ busy| - |busy| (everything already inside the window).
    s.host_bound = UnionLen(c_wait, busy) - busy_len;
    s.host_bound_sync = UnionLen(c_sync, busy) - busy_len;
    s.host_bound_dispatch = s.host_bound - s.host_bound_sync;
    if (alloc) {
      const auto& ts = alloc->sample_ts;
      auto p = std::upper_bound(ts.begin(), ts.end(), w0);
      size_t i = p == ts.begin() ? 0 : size_t(p - ts.begin()) - 1;
      for (; i < ts.size() && ts[i] < w1; ++i)
        s.peak_allocated = std::max(s.peak_allocated, alloc->sample_value[i]);
    }
    double vio_sum = 0, ep_sum = 0;
    int layers = 0;
    for (auto& [key, v] : loads) {
      if (key.first != s.step) continue;
      const RoutingRecord* r = proto[key];
      vio_sum += MaxVio(v);
      int g = std::max(1, r->ep_size);
      std::vector<double> ep(g, 0);
      const size_t per_rank = std::max<size_t>(1, v.size() / g);  // clang before 16 cannot
      // capture a structured binding (v) in a lambda
      auto pos_of = [&](size_t e) {
        int pos = !r->expert_to_ep_rank.empty() ? r->expert_to_ep_rank[e] : int(e / per_rank);
        return std::min(pos, g - 1);
      };
      for (size_t e = 0; e < v.size(); ++e) ep[pos_of(e)] += v[e];
      if (auto c = copy_tokens.find(key); c != copy_tokens.end()) {
        // A copy's tokens leave its expert's rank for the copy's.
        for (size_t k = 0; k < c->second.size(); ++k) {
          ep[pos_of(size_t(r->copy_expert[k]))] -= c->second[k];
          ep[std::min(r->copy_ep_rank[k], g - 1)] += c->second[k];
        }
      }
      ep_sum += MaxVio(ep);
      ++layers;
    }
    if (layers > 0) {
      s.max_vio = vio_sum / layers;
      s.ep_max_vio = ep_sum / layers;
    }
    out.push_back(s);
  }
  return out;
}

std::vector<LabeledValue> GroundTruthLabels(const Rank& rank) {
  std::vector<LabeledValue> out;
  auto steps = ComputeBreakdown(rank);
  // A rank whose work has no step (an RL rollout-only card) has no step
  // figures to label: the analyzer makes its whole span one step 0.
  if (steps.size() == 1 && steps[0].step < 0) return out;
  StepBreakdown total;
  total.step = kNone;
  double vio = 0, ep_vio = 0;
  int vio_n = 0;
  for (const auto& s : steps) {
    total.span += s.span;
    total.compute += s.compute;
    total.comm += s.comm;
    total.comm_overlapped += s.comm_overlapped;
    total.comm_exposed += s.comm_exposed;
    total.copy_exposed += s.copy_exposed;
    total.free += s.free;
    total.host_bound += s.host_bound;
    total.host_bound_sync += s.host_bound_sync;
    total.host_bound_dispatch += s.host_bound_dispatch;
    total.bubble += s.bubble;
    for (int k = 0; k < kCommClassCount; ++k) {
      total.class_total[k] += s.class_total[k];
      total.class_exposed[k] += s.class_exposed[k];
    }
    total.peak_allocated = std::max(total.peak_allocated, s.peak_allocated);
    if (s.max_vio >= 0) {
      vio += s.max_vio;
      ep_vio += s.ep_max_vio;
      ++vio_n;
    }
  }
  if (vio_n > 0) {
    total.max_vio = vio / vio_n;
    total.ep_max_vio = ep_vio / vio_n;
  }
  // The rank's figure is the whole trace's peak, as the analyzer reads it:
  // an RL card's rollout (inference weights + KV cache) lies outside every
  // step window and can be its peak (718B RL preset, tracegen/rl/README.md).
  total.peak_allocated = std::max(total.peak_allocated, FindMemoryPeak(rank).peak);
  steps.push_back(total);
  for (const auto& s : steps) {
    auto put = [&](std::string key, double v) { out.push_back({rank.rank, s.step, std::move(key), v}); };
    put("breakdown.span_ns", double(s.span));
    put("breakdown.compute_ns", double(s.compute));
    put("breakdown.comm_ns", double(s.comm));
    put("breakdown.comm_overlapped_ns", double(s.comm_overlapped));
    put("breakdown.comm_exposed_ns", double(s.comm_exposed));
    put("breakdown.copy_exposed_ns", double(s.copy_exposed));
    put("breakdown.free_ns", double(s.free));
    put("breakdown.host_bound_ns", double(s.host_bound));
    put("breakdown.host_bound_sync_ns", double(s.host_bound_sync));
    put("breakdown.host_bound_dispatch_ns", double(s.host_bound_dispatch));
    put("breakdown.bubble_ns", double(s.bubble));
    for (int k = 0; k < kCommClassCount; ++k) {
      std::string cls(CommClassName(CommClass(k)));
      put("comm_by_class." + cls + ".total_ns", double(s.class_total[k]));
      put("comm_by_class." + cls + ".exposed_ns", double(s.class_exposed[k]));
    }
    put("memory.peak_allocated_bytes", s.peak_allocated);
    if (s.max_vio >= 0) {
      put("expert_imbalance.max_vio", s.max_vio);
      put("expert_imbalance.ep_max_vio", s.ep_max_vio);
    }
  }
  return out;
}

MemoryPeak FindMemoryPeak(const Rank& rank) {
  MemoryPeak p;
  const Track* alloc = nullptr;
  for (const Track& t : rank.tracks)
    if (t.kind == TrackKind::kCounter && t.counter == CounterKind::kMemAllocated) alloc = &t;
  if (!alloc) return p;
  for (size_t i = 0; i < alloc->sample_ts.size(); ++i) {
    if (alloc->sample_value[i] > p.peak) {
      p.peak = alloc->sample_value[i];
      p.at = alloc->sample_ts[i];
    }
  }
  for (const Track& t : rank.tracks) {
    if (t.kind != TrackKind::kCounter || t.counter == CounterKind::kMemAllocated) continue;
    auto it = std::upper_bound(t.sample_ts.begin(), t.sample_ts.end(), p.at);
    if (it == t.sample_ts.begin()) continue;
    double v = t.sample_value[size_t(it - t.sample_ts.begin()) - 1];
    if (v > p.holder_bytes) {
      p.holder_bytes = v;
      p.holder = std::string(CounterKindName(t.counter));
    }
  }
  return p;
}

}  // namespace moetrace::tracegen
