#include "formats/export/launch_flows.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace moetrace {
namespace {

Event Ev(TimeNs ts, TimeNs dur, Category c, int64_t corr) {
  Event e;
  e.ts = ts;
  e.dur = dur;
  e.category = c;
  e.correlation = corr;
  return e;
}

TEST(LaunchFlows, StartsAtTheLaunchThatEndsLast) {
  Rank r;
  r.rank = 3;
  // Every track first: AddTrack may reallocate.
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "py", 1);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "disp", 2);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "s", 0);
  Track& py = r.tracks[0];
  Track& disp = r.tracks[1];
  Track& dev = r.tracks[2];
  py.events.Append(Ev(0, 10, Category::kLaunch, 5));     // enqueue, ends at 10
  disp.events.Append(Ev(12, 3, Category::kLaunch, 5));   // dequeue, ends at 15: the source
  py.events.Append(Ev(20, 100, Category::kHostOp, 6));   // not a launch: ignored
  py.events.Append(Ev(30, 5, Category::kLaunch, 7));     // launch whose op is missing
  dev.events.Append(Ev(40, 50, Category::kCompute, 5));  // the target
  dev.events.Append(Ev(95, 5, Category::kCompute, 6));   // op without a launch
  dev.events.Append(Ev(100, 5, Category::kSync, 5));     // a wait, never a target
  const LaunchFlows f = FindLaunchFlows(r);
  EXPECT_EQ(f.count, 1u);
  const uint64_t id = FlowId(3, 5);
  EXPECT_EQ(f.StartOf(0, 0), 0u);
  EXPECT_EQ(f.StartOf(1, 0), id);
  EXPECT_EQ(f.StartOf(0, 2), 0u);
  EXPECT_EQ(f.EndOf(2, 0), id);
  EXPECT_EQ(f.EndOf(2, 1), 0u);
  EXPECT_EQ(f.EndOf(2, 2), 0u);
}

TEST(LaunchFlows, TiesAndDuplicatesAreResolvedDeterministically) {
  Rank r;
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "a", 1);
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "b", 2);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "s0", 0);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "s1", 1);
  Track& a = r.tracks[0];
  Track& b = r.tracks[1];
  Track& s0 = r.tracks[2];
  Track& s1 = r.tracks[3];
  a.events.Append(Ev(0, 10, Category::kLaunch, 1));  // same end as b's, earlier start
  b.events.Append(Ev(5, 5, Category::kLaunch, 1));   // later start wins
  s1.events.Append(Ev(20, 5, Category::kCollective, 1));
  s0.events.Append(Ev(30, 5, Category::kCompute, 1));  // first in track order wins
  const LaunchFlows f = FindLaunchFlows(r);
  EXPECT_EQ(f.count, 1u);
  EXPECT_EQ(f.StartOf(0, 0), 0u);
  EXPECT_NE(f.StartOf(1, 0), 0u);
  EXPECT_NE(f.EndOf(2, 0), 0u);
  EXPECT_EQ(f.EndOf(3, 0), 0u);
}

// Unsorted correlations over several tracks: every correlation that has both
// a launch and a device op gets exactly one flow, from its latest launch.
TEST(LaunchFlows, MatchesBruteForceOnShuffledCorrelations) {
  std::mt19937 rng(11);
  Rank r;
  for (int t = 0; t < 3; ++t) r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "h", t + 1);
  for (int t = 0; t < 4; ++t) r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "s", t);
  std::map<int64_t, std::pair<TimeNs, std::pair<size_t, size_t>>> latest;  // corr -> end, where
  std::set<int64_t> with_op;
  for (int i = 0; i < 2000; ++i) {
    const int64_t corr = rng() % 700;
    const bool host = rng() % 2;
    const size_t t = host ? rng() % 3 : 3 + rng() % 4;
    Track& track = r.tracks[t];
    const TimeNs ts = rng() % 100000;
    const TimeNs dur = 1 + rng() % 1000;
    if (host) {
      track.events.Append(Ev(ts, dur, Category::kLaunch, corr));
      auto key = std::make_pair(ts + dur, std::make_pair(t, track.events.size() - 1));
      auto it = latest.find(corr);
      // Same order as the writer: latest end, then later start, track, index.
      if (it == latest.end() || ts + dur > it->second.first ||
          (ts + dur == it->second.first &&
           std::make_tuple(ts, t, track.events.size() - 1) >
               std::make_tuple(r.tracks[it->second.second.first].events.ts[it->second.second.second],
                               it->second.second.first, it->second.second.second))) {
        latest[corr] = key;
      }
    } else {
      track.events.Append(Ev(ts, dur, Category::kCompute, corr));
      with_op.insert(corr);
    }
  }
  const LaunchFlows f = FindLaunchFlows(r);
  size_t expected = 0;
  for (const auto& [corr, where] : latest) {
    if (!with_op.count(corr)) continue;
    ++expected;
    EXPECT_EQ(f.StartOf(where.second.first, where.second.second), FlowId(0, corr)) << corr;
  }
  EXPECT_EQ(f.count, expected);
  size_t starts = 0, ends = 0;
  for (size_t t = 0; t < r.tracks.size(); ++t) {
    for (size_t i = 0; i < r.tracks[t].events.size(); ++i) {
      starts += f.StartOf(t, i) != 0;
      ends += f.EndOf(t, i) != 0;
    }
  }
  EXPECT_EQ(starts, expected);
  EXPECT_EQ(ends, expected);
}

TEST(FlowId, DistinctNonZeroAndExactAsDouble) {
  std::set<uint64_t> ids;
  for (int32_t rank : {0, 1, 7, 4095, 65534, 65535, 1 << 20}) {
    for (int64_t corr : {int64_t{0}, int64_t{1}, int64_t{123456}, (int64_t{1} << 36) - 1,
                         int64_t{1} << 36, int64_t{1} << 62}) {
      uint64_t id = FlowId(rank, corr);
      EXPECT_NE(id, 0u);
      EXPECT_LT(id, uint64_t{1} << 53);
      EXPECT_TRUE(ids.insert(id).second) << rank << " " << corr;
    }
  }
  EXPECT_EQ(FlowId(0, 5), (uint64_t{1} << 36) | 5);
}

}  // namespace
}  // namespace moetrace
