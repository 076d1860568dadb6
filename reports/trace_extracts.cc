#include "reports/trace_extracts.h"

#include <algorithm>
#include <unordered_map>

namespace moetrace {
namespace {

struct Raw {
  TimeNs start, end;
  StringId name;
};

// Sorted, merged when the gap is below `min_gap`; keeps the longest op's name.
std::vector<Interval> Merge(std::vector<Raw>& raw, TimeNs min_gap, const StringTable& strings) {
  std::sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) { return a.start < b.start; });
  std::vector<Interval> out;
  TimeNs longest = -1;
  for (const Raw& r : raw) {
    if (!out.empty() && r.start <= out.back().end + min_gap) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back({r.start, r.end, {}});
      longest = -1;
    }
    if (r.end - r.start > longest && strings.Contains(r.name)) {
      longest = r.end - r.start;
      out.back().label = std::string(strings.Get(r.name));
    }
  }
  return out;
}

}  // namespace

bool PickWorstStep(const analysis::Analysis& a, int32_t* rank, int32_t* step, TimeNs* start,
                   TimeNs* end) {
  const analysis::RankAnalysis* slowest = nullptr;
  double worst_mean = -1;
  for (const auto& r : a.ranks()) {
    if (r.steps_size() == 0) continue;
    const double mean = r.breakdown().span_ns() / double(r.steps_size());
    if (mean > worst_mean) {
      worst_mean = mean;
      slowest = &r;
    }
  }
  if (!slowest) return false;
  const analysis::Breakdown* w = nullptr;
  for (const auto& s : slowest->steps()) {
    if (!w || s.span_ns() > w->span_ns()) w = &s;
  }
  if (!w->has_start_ns() || w->span_ns() <= 0) return false;
  *rank = slowest->rank();
  *step = w->has_step() ? w->step() : -1;
  *start = w->start_ns();
  *end = w->start_ns() + w->span_ns();
  return true;
}

Timeline ExtractTimeline(const Rank& rank, TimeNs start, TimeNs end, int resolution) {
  Timeline t;
  t.rank = rank.rank;
  t.start = start;
  t.end = end;
  // L(b): the latest end of the launch events of each correlation.
  std::unordered_map<int64_t, TimeNs> launch_end;
  for (const Track& track : rank.tracks) {
    if (track.kind != TrackKind::kHostThread) continue;
    const EventTable& e = track.events;
    for (size_t i = 0; i < e.size(); ++i) {
      if (e.category[i] != Category::kLaunch || e.correlation[i] < 0) continue;
      TimeNs& l = launch_end[e.correlation[i]];
      l = std::max(l, e.End(i));
    }
  }
  std::vector<Raw> raw[4];
  for (const Track& track : rank.tracks) {
    if (track.kind != TrackKind::kDeviceStream) continue;
    const EventTable& e = track.events;
    TimeNs prev_end = INT64_MIN;
    for (size_t i = 0; i < e.size(); ++i) {
      int lane;
      switch (e.category[i]) {
        case Category::kCompute: lane = 0; break;
        case Category::kCollective: case Category::kP2P: lane = 1; break;
        case Category::kCopy: lane = 2; break;
        default: continue;  // syncs are waits, markers cost nothing
      }
      const TimeNs s = e.ts[i], f = e.End(i);
      if (prev_end != INT64_MIN && s > prev_end && e.correlation[i] >= 0) {
        auto it = launch_end.find(e.correlation[i]);
        if (it != launch_end.end() && it->second > prev_end) {
          const TimeNs ws = std::max(prev_end, start), we = std::min({s, it->second, end});
          if (we > ws) raw[3].push_back({ws, we, 0});
        }
      }
      prev_end = std::max(prev_end, f);
      if (f <= start || s >= end) continue;
      raw[lane].push_back({std::max(s, start), std::min(f, end), e.name[i]});
    }
  }
  const TimeNs min_gap = std::max<TimeNs>(0, (end - start) / std::max(1, resolution));
  for (int l = 0; l < 4; ++l) t.lanes[l] = Merge(raw[l], min_gap, rank.strings);
  return t;
}

MemorySeries ExtractMemory(const Rank& rank, size_t max_points) {
  MemorySeries m;
  m.rank = rank.rank;
  for (const Track& track : rank.tracks) {
    if (track.kind != TrackKind::kCounter) continue;
    std::vector<std::pair<TimeNs, double>>* out =
        track.counter == CounterKind::kMemAllocated ? &m.allocated
        : track.counter == CounterKind::kMemReserved ? &m.reserved
                                                       : nullptr;
    if (!out || track.sample_ts.empty()) continue;
    const size_t n = track.sample_ts.size();
    if (n <= max_points) {
      for (size_t i = 0; i < n; ++i) out->emplace_back(track.sample_ts[i], track.sample_value[i]);
      continue;
    }
    // One point per bucket: its largest sample, so the peak survives.
    const size_t per = (n + max_points - 1) / max_points;
    for (size_t b = 0; b < n; b += per) {
      size_t best = b;
      for (size_t i = b; i < std::min(n, b + per); ++i) {
        if (track.sample_value[i] > track.sample_value[best]) best = i;
      }
      out->emplace_back(track.sample_ts[best], track.sample_value[best]);
    }
  }
  return m;
}

ExpertLoads ExpertLoadsOf(const analysis::ExpertImbalance& ei) {
  ExpertLoads loads;
  for (const analysis::ExpertLayer& l : ei.layers()) {  // by layer, as the analysis lists them
    if (l.tokens_size() == 0) continue;
    loads.layers.push_back(l.layer());
    loads.tokens.emplace_back(l.tokens().begin(), l.tokens().end());
  }
  return loads;
}

bool ReadRankById(const TraceSource& source, const analysis::Analysis& a, int32_t rank, Rank* out) {
  // The analysis lists ranks by id; sources usually do too: try that first.
  for (int i = 0; i < a.ranks_size(); ++i) {
    if (a.ranks(i).rank() != rank || static_cast<size_t>(i) >= source.rank_count()) continue;
    *out = source.ReadRank(i);
    if (out->rank == rank) return true;
  }
  for (size_t i = 0; i < source.rank_count(); ++i) {
    *out = source.ReadRank(i);
    if (out->rank == rank) return true;
  }
  return false;
}

}  // namespace moetrace
