#include "formats/export/launch_flows.h"

#include <algorithm>
#include <tuple>

namespace moetrace {
namespace {

struct Endpoint {
  int64_t correlation;
  uint32_t track;
  uint32_t index;
  TimeNs end;  // launches: End(); the latest one starts the flow
  TimeNs ts;
};

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool ByCorrelation(const Endpoint& a, const Endpoint& b) { return a.correlation < b.correlation; }

// Sorts `v` by correlation, given that [bounds[k], bounds[k + 1]) are the
// endpoints of one track: correlations usually grow along a track, so each
// run is checked (sorted only if needed) and the runs are merged, which is
// far cheaper than sorting everything.
void SortRuns(std::vector<Endpoint>& v, std::vector<size_t> bounds) {
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    auto first = v.begin() + bounds[k];
    auto last = v.begin() + bounds[k + 1];
    if (!std::is_sorted(first, last, ByCorrelation)) std::sort(first, last, ByCorrelation);
  }
  while (bounds.size() > 2) {
    std::vector<size_t> merged;
    for (size_t k = 0; k + 2 < bounds.size(); k += 2) {
      std::inplace_merge(v.begin() + bounds[k], v.begin() + bounds[k + 1],
                         v.begin() + bounds[k + 2], ByCorrelation);
      merged.push_back(bounds[k]);
    }
    if (bounds.size() % 2 == 0) merged.push_back(bounds[bounds.size() - 2]);
    merged.push_back(bounds.back());
    bounds.swap(merged);
  }
}

}  // namespace

bool IsDeviceOp(const Track& track, size_t index) {
  if (track.kind != TrackKind::kDeviceStream) return false;
  switch (track.events.category[index]) {
    case Category::kCompute:
    case Category::kCollective:
    case Category::kP2P:
    case Category::kCopy:
      return true;
    default:
      return false;
  }
}

uint64_t FlowId(int32_t rank, int64_t correlation) {
  // Compact ids (rank + 1) << 36 | correlation stay below 2^52; anything out
  // of that range is hashed into [2^52, 2^53), so the two never collide.
  constexpr int kCorrBits = 36;
  constexpr uint64_t kRankLimit = uint64_t{1} << (52 - kCorrBits);
  const uint64_t r = static_cast<uint64_t>(static_cast<int64_t>(rank)) + 1;
  if (correlation >= 0 && correlation < (int64_t{1} << kCorrBits) && r < kRankLimit) {
    return (r << kCorrBits) | static_cast<uint64_t>(correlation);
  }
  uint64_t h = Mix(Mix(r) ^ static_cast<uint64_t>(correlation));
  return (h & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
}

LaunchFlows FindLaunchFlows(const Rank& rank) {
  std::vector<Endpoint> launches;
  std::vector<Endpoint> ops;
  std::vector<size_t> launch_runs{0};
  std::vector<size_t> op_runs{0};
  for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& track = rank.tracks[t];
    if (track.kind == TrackKind::kCounter) continue;
    const EventTable& ev = track.events;
    for (uint32_t i = 0; i < ev.size(); ++i) {
      int64_t corr = ev.correlation[i];
      if (corr < 0) continue;
      if (track.kind == TrackKind::kHostThread && ev.category[i] == Category::kLaunch) {
        launches.push_back({corr, t, i, ev.End(i), ev.ts[i]});
      } else if (IsDeviceOp(track, i)) {
        ops.push_back({corr, t, i, ev.End(i), ev.ts[i]});
      }
    }
    if (launches.size() != launch_runs.back()) launch_runs.push_back(launches.size());
    if (ops.size() != op_runs.back()) op_runs.push_back(ops.size());
  }
  // Sort by correlation only (cheap), then pick the flow's endpoints within
  // each run by a full comparison, so the result does not depend on how the
  // sort ordered equal keys.
  SortRuns(launches, std::move(launch_runs));
  SortRuns(ops, std::move(op_runs));
  // The source: latest end, then later start, then later track / index.
  auto later_launch = [](const Endpoint& a, const Endpoint& b) {
    return std::tie(a.end, a.ts, a.track, a.index) > std::tie(b.end, b.ts, b.track, b.index);
  };
  // The target: first device op in track order.
  auto earlier_op = [](const Endpoint& a, const Endpoint& b) {
    return std::tie(a.track, a.index) < std::tie(b.track, b.index);
  };

  LaunchFlows flows;
  flows.start.resize(rank.tracks.size());
  flows.end.resize(rank.tracks.size());
  size_t li = 0;
  size_t oi = 0;
  while (li < launches.size() && oi < ops.size()) {
    const int64_t lc = launches[li].correlation;
    const int64_t oc = ops[oi].correlation;
    if (lc < oc) {
      ++li;
      continue;
    }
    if (oc < lc) {
      ++oi;
      continue;
    }
    const Endpoint* l = &launches[li];
    for (++li; li < launches.size() && launches[li].correlation == lc; ++li) {
      if (later_launch(launches[li], *l)) l = &launches[li];
    }
    const Endpoint* o = &ops[oi];
    for (++oi; oi < ops.size() && ops[oi].correlation == oc; ++oi) {
      if (earlier_op(ops[oi], *o)) o = &ops[oi];
    }
    const uint64_t id = FlowId(rank.rank, lc);
    auto& s = flows.start[l->track];
    if (s.empty()) s.assign(rank.tracks[l->track].events.size(), 0);
    s[l->index] = id;
    auto& e = flows.end[o->track];
    if (e.empty()) e.assign(rank.tracks[o->track].events.size(), 0);
    e[o->index] = id;
    ++flows.count;
  }
  return flows;
}

}  // namespace moetrace
