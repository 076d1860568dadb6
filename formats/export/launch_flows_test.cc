#include "formats/export/launch_flows.h"

#include <gtest/gtest.h>

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
