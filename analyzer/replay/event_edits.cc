#include "analyzer/replay/event_edits.h"

#include <algorithm>
#include <map>

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
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kCounter) continue;
    if (mem.derived_total && int32_t(t) == mem.total_track) continue;
    double prev = 0;
    for (size_t i = 0; i < tr.sample_ts.size(); ++i) {
      MemDelta d;
      d.counter_track = int32_t(t);
      d.ts = tr.sample_ts[i];
      d.delta = tr.sample_value[i] - prev;
      prev = tr.sample_value[i];
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
