#include "formats/perfetto/track_lanes.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

std::vector<uint32_t> Lane(const TrackLanes& l, uint32_t lane) {
  return {l.order.begin() + l.lane_begin[lane], l.order.begin() + l.lane_begin[lane + 1]};
}

TEST(TrackLanes, NestedEventsShareOneLane) {
  EventTable ev;
  ev.Append({.ts = 0, .dur = 100});   // 0 parent
  ev.Append({.ts = 0, .dur = 40});    // 1 child, same start
  ev.Append({.ts = 40, .dur = 60});   // 2 child, same end as parent
  ev.Append({.ts = 100, .dur = 10});  // 3 starts when 0 ends: sibling
  TrackLanes l;
  AssignLanes(ev, &l);
  ASSERT_EQ(l.lane_count, 1u);
  EXPECT_EQ(Lane(l, 0), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(TrackLanes, OverlapWithoutNestingGoesToExtraLane) {
  EventTable ev;
  ev.Append({.ts = 0, .dur = 100});   // 0 A
  ev.Append({.ts = 10, .dur = 10});   // 1 C inside A
  ev.Append({.ts = 50, .dur = 100});  // 2 B overlaps A's end
  ev.Append({.ts = 60, .dur = 0});    // 3 instant
  ev.Append({.ts = 120, .dur = 10});  // 4 D: lane 0 is idle again by then
  TrackLanes l;
  AssignLanes(ev, &l);
  ASSERT_EQ(l.lane_count, 2u);
  EXPECT_EQ(Lane(l, 0), (std::vector<uint32_t>{0, 1, 3, 4}));
  EXPECT_EQ(Lane(l, 1), (std::vector<uint32_t>{2}));
}

TEST(TrackLanes, UnsortedInputIsOrderedParentFirst) {
  EventTable ev;
  ev.Append({.ts = 30, .dur = 5});   // 0
  ev.Append({.ts = 20, .dur = 5});   // 1 child of 2, listed first
  ev.Append({.ts = 20, .dur = 50});  // 2
  ev.Append({.ts = 25, .dur = 50});  // 3 overlaps 2 without nesting
  TrackLanes l;
  AssignLanes(ev, &l);
  ASSERT_EQ(l.lane_count, 2u);
  EXPECT_EQ(Lane(l, 0), (std::vector<uint32_t>{2, 1, 0}));
  EXPECT_EQ(Lane(l, 1), (std::vector<uint32_t>{3}));
}

TEST(TrackLanes, EmptyTrackHasNoLanes) {
  EventTable ev;
  TrackLanes l;
  AssignLanes(ev, &l);
  EXPECT_EQ(l.lane_count, 0u);
  EXPECT_TRUE(l.order.empty());
}

}  // namespace
}  // namespace moetrace
