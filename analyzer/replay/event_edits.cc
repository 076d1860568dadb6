#include "analyzer/replay/event_edits.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace moetrace::replay {
namespace {

}  // namespace

bool IsMemoryCategory(CounterKind k) {
  return k == CounterKind::kMemWeights || k == CounterKind::kMemGradients ||
         k == CounterKind::kMemOptimizer || k == CounterKind::kMemActivations ||
         k == CounterKind::kMemRecompute || k == CounterKind::kMemSwap ||
         k == CounterKind::kMemComm;
}

namespace {

struct OpEdge {
  TimeNs t = 0;
  int32_t track = -1;
  int64_t event = -1;
  bool end = false;
};

uint64_t LayerKey(int32_t step, int32_t mb, int32_t layer) {
  return (uint64_t(uint32_t(step) & 0xfffff) << 40) | (uint64_t(uint32_t(mb) & 0xfffff) << 20) |
         uint64_t(uint32_t(layer) & 0xfffff);
}

// A buffer held between two op edges: +sign*x at `open`, -sign*x at `close`.
struct Interval {
  OpEdge open, close;
  int sign = 1;
  double x = 0;
};

// Per (step, micro-batch, layer) of a rank: the first forward op's start,
// the last backward op's end, the first recompute op's start, and the swap
// copies (out: freed at its end, in: back at its start).
struct LayerOps {
  OpEdge first_fwd, last_bwd, first_rec, swap_out, swap_in;
};

std::unordered_map<uint64_t, LayerOps> LayerEdges(const Rank& rank) {
  std::unordered_map<uint64_t, LayerOps> out;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kDeviceStream) continue;
    const EventTable& ev = tr.events;
    for (size_t i = 0; i < ev.size(); ++i) {
      if (ev.layer[i] < 0 || ev.micro_batch[i] < 0) continue;
      LayerOps& l = out[LayerKey(ev.step[i], ev.micro_batch[i], ev.layer[i])];
      const OpEdge start{ev.ts[i], int32_t(t), int64_t(i), false};
      const OpEdge end{ev.ts[i] + std::max<TimeNs>(0, ev.dur[i]), int32_t(t), int64_t(i), true};
      if (ev.category[i] == Category::kCopy) {
        if (ev.flags[i] & kFlagSwapOut) l.swap_out = end;
        if (ev.flags[i] & kFlagSwapIn) l.swap_in = start;
        continue;
      }
      if (ev.category[i] != Category::kCompute && ev.category[i] != Category::kCollective) continue;
      if (ev.phase[i] == Phase::kForward && (l.first_fwd.track < 0 || start.t < l.first_fwd.t)) l.first_fwd = start;
      if (ev.phase[i] == Phase::kRecompute && (l.first_rec.track < 0 || start.t < l.first_rec.t)) l.first_rec = start;
      if (ev.phase[i] == Phase::kBackward && (l.last_bwd.track < 0 || end.t >= l.last_bwd.t)) l.last_bwd = end;
    }
  }
  return out;
}

// Splits a counter whose samples may merge several buffers' steps at one
// time (a backward's release and the next forward's growth) into the
// buffers it holds: a sweep in time order where each sample's change, less
// the known releases at its time, is the size of the buffers opening then.
// What no interval explains stays as a plain step (`rest`).
void SplitIntervals(const Track& counter, std::vector<Interval>* intervals,
                    std::vector<std::pair<TimeNs, double>>* rest) {
  std::map<TimeNs, double> change;
  double prev = 0;
  for (size_t i = 0; i < counter.sample_ts.size(); ++i) {
    change[counter.sample_ts[i]] += counter.sample_value[i] - prev;
    prev = counter.sample_value[i];
  }
  std::multimap<TimeNs, size_t> opens, closes;
  for (size_t k = 0; k < intervals->size(); ++k) {
    opens.emplace((*intervals)[k].open.t, k);
    closes.emplace((*intervals)[k].close.t, k);
  }
  std::vector<char> opened(intervals->size(), 0);
  for (auto& [ts, d] : change) {
    double known = 0;
    for (auto [it, end] = closes.equal_range(ts); it != end; ++it) {
      const Interval& iv = (*intervals)[it->second];
      if (opened[it->second]) known -= iv.sign * iv.x;
    }
    std::vector<size_t> now;
    for (auto [it, end] = opens.equal_range(ts); it != end; ++it) now.push_back(it->second);
    double residual = d - known;
    if (!now.empty()) {
      const double per = residual / double(now.size());
      bool ok = true;
      for (size_t k : now) ok &= (*intervals)[k].sign * per >= 0;
      if (ok) {
        for (size_t k : now) {
          (*intervals)[k].x = std::abs(per);
          opened[k] = 1;
        }
        residual = 0;
      }
    }
    if (std::abs(residual) > 0.5) rest->emplace_back(ts, residual);
  }
  for (size_t k = 0; k < intervals->size(); ++k) {
    if (!opened[k]) (*intervals)[k].x = 0;
  }
}

// Attaches each step of every memory counter of the rank to the device op
// that starts (growth) or ends (release) at its time; copies first (swap),
// then the op whose phase fits (forward/recompute grow, backward releases).
RankMemory AttachMemory(const Rank& rank) {
  RankMemory mem;
  struct Edge { TimeNs t; int32_t track; int64_t event; bool end; };
  std::vector<Edge> edges;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.category[i] == Category::kMarker || tr.events.category[i] == Category::kSync) continue;
      edges.push_back({tr.events.ts[i], int32_t(t), int64_t(i), false});
      edges.push_back({tr.events.ts[i] + std::max<TimeNs>(0, tr.events.dur[i]), int32_t(t), int64_t(i), true});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  auto score = [&](const Edge& e, double delta) {
    const EventTable& ev = rank.tracks[size_t(e.track)].events;
    int s = 0;
    if (e.end == (delta < 0)) s += 4;  // growth at a start, release at an end
    if (ev.category[size_t(e.event)] == Category::kCopy) s += 8;
    const Phase p = ev.phase[size_t(e.event)];
    if (delta > 0 && (p == Phase::kForward || p == Phase::kRecompute) && !e.end) s += 2;
    if (delta < 0 && p == Phase::kBackward && e.end) s += 2;
    if (ev.micro_batch[size_t(e.event)] >= 0) s += 1;
    return s;
  };
  int total_tracks = 0, category_tracks = 0;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kCounter) continue;
    if (tr.counter == CounterKind::kMemAllocated) {
      mem.total_track = int32_t(t);
      ++total_tracks;
    } else if (IsMemoryCategory(tr.counter)) {
      ++category_tracks;
    }
  }
  mem.derived_total = total_tracks == 1 && category_tracks > 0;
  const auto layers = LayerEdges(rank);
  auto attach = [&](MemDelta& d) {
      auto lo = std::lower_bound(edges.begin(), edges.end(), d.ts,
                                 [](const Edge& e, TimeNs v) { return e.t < v; });
      int best = -1;
      for (auto it = lo; it != edges.end() && it->t == d.ts; ++it) {
        const int s = score(*it, d.delta);
        if (s > best) {
          best = s;
          d.op_track = it->track;
          d.op_event = it->event;
          d.at_end = it->end;
        }
      }
  };
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kCounter) continue;
    if (mem.derived_total && int32_t(t) == mem.total_track) continue;
    // Activations and recompute buffers: held per layer instance.
    std::vector<Interval> intervals;
    if (tr.counter == CounterKind::kMemActivations || tr.counter == CounterKind::kMemRecompute) {
      const bool rec = tr.counter == CounterKind::kMemRecompute;
      for (const auto& [key, l] : layers) {
        const OpEdge& open = rec ? l.first_rec : l.first_fwd;
        if (open.track >= 0 && l.last_bwd.track >= 0) intervals.push_back({open, l.last_bwd, 1, 0});
        if (!rec && l.swap_out.track >= 0 && l.swap_in.track >= 0) {
          intervals.push_back({l.swap_out, l.swap_in, -1, 0});
        }
      }
      std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
        return a.open.t != b.open.t ? a.open.t < b.open.t : a.open.event < b.open.event;
      });
    }
    if (!intervals.empty()) {
      std::vector<std::pair<TimeNs, double>> rest;
      SplitIntervals(tr, &intervals, &rest);
      for (const Interval& iv : intervals) {
        if (iv.x <= 0) continue;
        mem.deltas.push_back({int32_t(t), iv.open.track, iv.open.event, iv.open.end, iv.open.t, iv.sign * iv.x, false});
        mem.deltas.push_back({int32_t(t), iv.close.track, iv.close.event, iv.close.end, iv.close.t, -iv.sign * iv.x, false});
      }
      for (auto [ts, v] : rest) {
        MemDelta d;
        d.counter_track = int32_t(t);
        d.ts = ts;
        d.delta = v;
        attach(d);
        mem.deltas.push_back(d);
      }
      continue;
    }
    double prev = 0;
    for (size_t i = 0; i < tr.sample_ts.size(); ++i) {
      MemDelta d;
      d.counter_track = int32_t(t);
      d.ts = tr.sample_ts[i];
      d.delta = tr.sample_value[i] - prev;
      prev = tr.sample_value[i];
      attach(d);
      mem.deltas.push_back(d);
    }
  }
  std::stable_sort(mem.deltas.begin(), mem.deltas.end(),
                   [](const MemDelta& a, const MemDelta& b) { return a.ts < b.ts; });
  return mem;
}

}  // namespace

void EventEdits::Init(const Trace& trace) {
  active = true;
  dur.assign(trace.ranks.size(), {});
  removed.assign(trace.ranks.size(), {});
  memory.assign(trace.ranks.size(), {});
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    dur[r].resize(rank.tracks.size());
    removed[r].resize(rank.tracks.size());
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      if (tr.kind == TrackKind::kCounter) continue;
      dur[r][t].resize(tr.events.size());
      for (size_t i = 0; i < tr.events.size(); ++i) dur[r][t][i] = std::max<TimeNs>(0, tr.events.dur[i]);
      removed[r][t].assign(tr.events.size(), 0);
    }
    memory[r] = AttachMemory(rank);
  }
}

void EventEdits::RemoveOp(const Trace& trace, size_t r, size_t t, size_t i,
                          const LaunchIndex& launches) {
  removed[r][t][i] = 1;
  dur[r][t][i] = 0;
  const int64_t corr = trace.ranks[r].tracks[t].events.correlation[i];
  if (corr >= 0) {
    for (auto [h, k] : launches.Of(corr)) {
      removed[r][size_t(h)][size_t(k)] = 1;
      dur[r][size_t(h)][size_t(k)] = 0;
    }
  }
  // Memory deltas attached to a removed op are dropped by the replay.
  memory_edited = true;
}

LaunchIndex::LaunchIndex(const Rank& rank) {
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kHostThread) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.category[i] == Category::kLaunch && tr.events.correlation[i] >= 0) {
        sorted_.push_back({tr.events.correlation[i], {int32_t(t), int64_t(i)}});
      }
    }
  }
  std::sort(sorted_.begin(), sorted_.end());
}

std::vector<std::pair<int32_t, int64_t>> LaunchIndex::Of(int64_t corr) const {
  std::vector<std::pair<int32_t, int64_t>> out;
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(),
                             std::make_pair(corr, std::make_pair(int32_t(-1), int64_t(-1))));
  for (; it != sorted_.end() && it->first == corr; ++it) out.push_back(it->second);
  return out;
}

}  // namespace moetrace::replay
