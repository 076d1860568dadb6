#include "formats/perfetto/track_lanes.h"

#include <algorithm>
#include <numeric>

namespace moetrace {

void AssignLanes(const EventTable& ev, TrackLanes* out) {
  const size_t n = ev.size();
  // Time order: start, then longer first so a parent precedes its children.
  std::vector<uint32_t> by_time(n);
  std::iota(by_time.begin(), by_time.end(), 0u);
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) {
    sorted = ev.ts[i - 1] < ev.ts[i] || (ev.ts[i - 1] == ev.ts[i] && ev.dur[i - 1] >= ev.dur[i]);
  }
  if (!sorted) {
    std::sort(by_time.begin(), by_time.end(), [&](uint32_t a, uint32_t b) {
      if (ev.ts[a] != ev.ts[b]) return ev.ts[a] < ev.ts[b];
      if (ev.dur[a] != ev.dur[b]) return ev.dur[a] > ev.dur[b];
      return a < b;
    });
  }

  // One stack of open end times per lane.
  std::vector<std::vector<TimeNs>> open;
  std::vector<uint32_t> lane(n, 0);
  for (uint32_t i : by_time) {
    if (IsInstantEvent(ev, i)) {
      lane[i] = 0;
      if (open.empty()) open.emplace_back();
      continue;
    }
    const TimeNs ts = ev.ts[i];
    const TimeNs end = ev.End(i);
    size_t l = 0;
    for (; l < open.size(); ++l) {
      auto& stack = open[l];
      while (!stack.empty() && stack.back() <= ts) stack.pop_back();
      if (stack.empty() || stack.back() >= end) break;
    }
    if (l == open.size()) open.emplace_back();
    open[l].push_back(end);
    lane[i] = static_cast<uint32_t>(l);
  }

  // Group by lane, keeping time order within a lane (counting sort).
  out->lane_count = static_cast<uint32_t>(open.size());
  out->lane_begin.assign(out->lane_count + 1, 0);
  for (uint32_t i = 0; i < n; ++i) ++out->lane_begin[lane[i] + 1];
  for (uint32_t l = 0; l < out->lane_count; ++l) out->lane_begin[l + 1] += out->lane_begin[l];
  out->order.resize(n);
  std::vector<uint32_t> cursor(out->lane_begin.begin(), out->lane_begin.end() - 1);
  for (uint32_t i : by_time) out->order[cursor[lane[i]]++] = i;
}

}  // namespace moetrace
