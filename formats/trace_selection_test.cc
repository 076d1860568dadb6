#include "formats/trace_selection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "formats/errors.h"
#include "formats/ordered_ranks.h"

namespace moetrace {
namespace {

// Two steps of 100 ns (markers at 0 and 100) on a host thread; per step a
// device op with a comm record, one op without a step between the steps,
// and a counter sampled at 0, 50, 150.
Rank TwoSteps(int32_t id) {
  Rank r;
  r.rank = id;
  Track& host = r.AddTrack(TrackKind::kHostThread, TrackRole::kUnspecified, "py");
  for (int s = 0; s < 2; ++s) {
    Event m;
    m.ts = 100 * s;
    m.dur = 100;
    m.category = Category::kMarker;
    m.flags = kFlagStepMarker;
    m.step = s;
    host.events.Append(m);
  }
  Track& dev = r.AddTrack(TrackKind::kDeviceStream, TrackRole::kUnspecified, "hccl");
  for (int s = 0; s < 2; ++s) {
    CommRecord c;
    c.sequence = s;
    dev.comms.push_back(c);
    Event e;
    e.ts = 100 * s + 10;
    e.dur = 20;
    e.category = Category::kCollective;
    e.step = s;
    e.comm = s;
    dev.events.Append(e);
  }
  Event loose;
  loose.ts = 150;
  loose.dur = 5;
  dev.events.Append(loose);
  Track& mem = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "mem");
  mem.sample_ts = {0, 50, 150};
  mem.sample_value = {1, 2, 3};
  return r;
}

TEST(TraceSelection, ParsesIdLists) {
  EXPECT_EQ(ParseIdList("3,0-2,2", "--ranks"), (std::vector<int32_t>{0, 1, 2, 3}));
  for (const char* bad : {"", "a", "3-1", "1,", "-1", "1-2-3"}) {
    EXPECT_THROW(ParseIdList(bad, "--ranks"), InputError) << bad;
  }
}

TEST(TraceSelection, ParsesWindowsWithUnits) {
  TraceSelection s;
  ParseWindow("1.5us:2ms", &s);
  EXPECT_EQ(s.from_ns, 1500);
  EXPECT_EQ(s.to_ns, 2000000);
  TraceSelection open;
  ParseWindow("1s:", &open);
  EXPECT_EQ(open.from_ns, 1000000000);
  EXPECT_EQ(open.to_ns, INT64_MAX);
  for (const char* bad : {"5", "x:1", "2:1", "1:1"}) {
    TraceSelection t;
    EXPECT_THROW(ParseWindow(bad, &t), InputError) << bad;
  }
}

TEST(TraceSelection, StepKeepsItsEventsSamplesAndCommRecords) {
  TraceSelection s;
  s.steps = {1};
  Rank r = TwoSteps(0);
  FilterRankEvents(s, &r);
  ASSERT_EQ(r.tracks[0].events.size(), 1u);
  EXPECT_EQ(r.tracks[0].events.step[0], 1);
  const Track& dev = r.tracks[1];
  ASSERT_EQ(dev.events.size(), 2u);  // step 1's op and the step-less op inside its window
  EXPECT_EQ(dev.events.ts[0], 110);
  EXPECT_EQ(dev.events.comm[0], 0);  // re-indexed
  ASSERT_EQ(dev.comms.size(), 1u);
  EXPECT_EQ(dev.comms[0].sequence, 1);
  EXPECT_EQ(dev.events.ts[1], 150);
  // The sample in force at 100 (from 50) and the one inside.
  EXPECT_EQ(r.tracks[2].sample_ts, (std::vector<TimeNs>{50, 150}));
  EXPECT_EQ(r.tracks[2].sample_value, (std::vector<double>{2, 3}));
}

// A step cut keeps what the analyzer needs at its start (METRICS.md host
// waits): the host sync of step 0 that ends as step 1 begins, and on each
// stream the end of the last op it dropped before its first kept one.
TEST(TraceSelection, StepCutKeepsTheSyncEndingInItAndThePriorEnd) {
  Rank r = TwoSteps(0);
  Event sync;  // step 0's loss read, ending at step 1's marker
  sync.ts = 60;
  sync.dur = 40;
  sync.category = Category::kSync;
  sync.step = 0;
  r.tracks[0].events.Append(sync);
  Event early;  // a step-0 sync ending inside step 0: dropped
  early.ts = 40;
  early.dur = 10;
  early.category = Category::kSync;
  early.step = 0;
  r.tracks[0].events.Append(early);
  TraceSelection s;
  s.steps = {1};
  FilterRankEvents(s, &r);
  const EventTable& host = r.tracks[0].events;
  ASSERT_EQ(host.size(), 2u);  // step 1's marker and step 0's sync ending at 100
  EXPECT_EQ(host.ts[1], 60);
  EXPECT_EQ(r.tracks[0].prior_end, INT64_MIN);  // host threads have none
  EXPECT_EQ(r.tracks[1].prior_end, 30);         // step 0's op [10, 30)
  // Cutting the cut again keeps the first cut's prior end.
  FilterRankEvents(s, &r);
  EXPECT_EQ(r.tracks[1].prior_end, 30);
  // Nothing dropped before the first kept op: no prior end.
  Rank whole = TwoSteps(0);
  TraceSelection first;
  first.steps = {0};
  FilterRankEvents(first, &whole);
  EXPECT_EQ(whole.tracks[1].prior_end, INT64_MIN);
}

// A step cut records, on each stream, the launch of the next step's first
// op (the analyzer's host wait after the last kept op): the latest end of
// its launch events, the last host sync before it on the launching thread,
// and its name.
TEST(TraceSelection, StepCutRecordsTheNextOpsLaunch) {
  Rank r = TwoSteps(0);
  Track& dev = r.tracks[1];
  dev.events.correlation[0] = 7;
  dev.events.correlation[1] = 8;
  dev.events.name[1] = r.strings.Intern("allreduce");
  auto host_event = [&](TimeNs ts, TimeNs dur, Category cat, int64_t corr, int32_t step) {
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.category = cat;
    e.correlation = corr;
    e.step = step;
    r.tracks[0].events.Append(e);
  };
  host_event(5, 3, Category::kLaunch, 7, 0);
  host_event(101, 2, Category::kLaunch, 8, 1);  // an earlier launch of the same op
  host_event(102, 4, Category::kLaunch, 8, 1);  // the latest: 106
  host_event(80, 15, Category::kSync, -1, 0);   // ends at 95: the last before 106
  host_event(60, 10, Category::kSync, -1, 0);
  host_event(104, 5, Category::kSync, -1, 1);   // ends after the launch
  TraceSelection s;
  s.steps = {0};
  FilterRankEvents(s, &r);
  const Track& cut = r.tracks[1];
  EXPECT_EQ(cut.after_start, 110);
  EXPECT_EQ(cut.after_launch, 106);
  EXPECT_EQ(cut.after_sync, 95);
  EXPECT_EQ(r.strings.Get(cut.after_name), "allreduce");
  // Cutting the cut again keeps them; the last step has no next op.
  FilterRankEvents(s, &r);
  EXPECT_EQ(r.tracks[1].after_launch, 106);
  EXPECT_EQ(r.tracks[1].after_sync, 95);
  Rank last = TwoSteps(0);
  s.steps = {1};
  FilterRankEvents(s, &last);
  EXPECT_EQ(last.tracks[1].after_start, INT64_MAX);
  EXPECT_EQ(last.tracks[1].after_launch, INT64_MIN);
}

TEST(TraceSelection, WindowKeepsWhatOverlapsIt) {
  TraceSelection s;
  s.from_ns = 25;
  s.to_ns = 112;
  Rank r = TwoSteps(0);
  FilterRankEvents(s, &r);
  EXPECT_EQ(r.tracks[0].events.size(), 2u);  // both markers overlap
  ASSERT_EQ(r.tracks[1].events.size(), 2u);  // [10,30) and [110,130)
  EXPECT_EQ(r.tracks[2].sample_ts, (std::vector<TimeNs>{0, 50}));
}

TEST(TraceSelection, SelectsRanksByIdAndTheirLabels) {
  Trace t;
  for (int32_t id : {4, 5, 6}) t.ranks.push_back(TwoSteps(id));
  for (int32_t id : {4, 5, 6}) {
    t.metadata.ground_truth.push_back({id, kNone, "breakdown.span_ns", 1});
    t.metadata.ground_truth.push_back({id, 1, "breakdown.span_ns", 1});
  }
  TraceSelection s;
  s.ranks = {5, 6, 9};
  s.steps = {1};
  auto src = SelectFrom(std::make_unique<MemorySource>(t), s);
  ASSERT_EQ(src->rank_count(), 2u);
  EXPECT_EQ(src->ReadRank(0).rank, 5);
  EXPECT_EQ(src->ReadRank(1).rank, 6);
  ASSERT_EQ(src->metadata().ground_truth.size(), 2u);
  EXPECT_EQ(src->metadata().ground_truth[0].rank, 5);
  EXPECT_EQ(src->metadata().ground_truth[0].step, 1);
  TraceSelection none;
  none.ranks = {7};
  EXPECT_THROW(SelectFrom(std::make_unique<MemorySource>(t), none), InputError);
  // A time window may cut any step: no labelled figure describes it.
  TraceSelection window;
  window.ranks = {5};
  window.from_ns = 25;
  auto cut = SelectFrom(std::make_unique<MemorySource>(t), window);
  EXPECT_EQ(cut->rank_count(), 1u);
  EXPECT_TRUE(cut->metadata().ground_truth.empty());
}

TEST(OrderedRanks, GivesEveryRankInOrderOnAnyThreadCount) {
  Trace t;
  for (int32_t id = 0; id < 37; ++id) t.ranks.push_back(TwoSteps(id));
  MemorySource src(t);
  for (size_t threads : {1, 2, 5}) {
    std::vector<int32_t> seen;
    ForEachRankInOrder(src, threads, 3, [&](size_t i, const Rank& r) {
      EXPECT_EQ(size_t(r.rank), i);
      seen.push_back(r.rank);
    });
    EXPECT_EQ(seen.size(), 37u) << threads;
  }
}

// A source whose rank 5 cannot be read.
class FailingSource : public MemorySource {
 public:
  using MemorySource::MemorySource;
  void ReadRankInto(size_t i, Rank* out) const override {
    if (i == 5) throw InputError("bad.json: byte 7: broken");
    MemorySource::ReadRankInto(i, out);
  }
};

// Rank 5 fails after 30 ms (other ranks are read meanwhile).
class SlowBadFifth : public MemorySource {
 public:
  using MemorySource::MemorySource;
  void ReadRankInto(size_t i, Rank* out) const override {
    if (i == 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      throw InputError("bad.json: byte 9: broken late");
    }
    MemorySource::ReadRankInto(i, out);
  }
};

TEST(OrderedRanks, FirstErrorStopsTheWorkersAndIsRethrown) {
  Trace t;
  for (int32_t id = 0; id < 40; ++id) t.ranks.push_back(TwoSteps(id));
  FailingSource src(t);
  std::atomic<int> consumed{0};
  EXPECT_THROW(ForEachRankInOrder(src, 2, 4, [&](size_t, const Rank&) { ++consumed; }),
               InputError);
  EXPECT_EQ(consumed.load(), 5);
  MemorySource ok(t);
  EXPECT_THROW(ForEachRankInOrder(ok, 2, 4,
                                  [&](size_t i, const Rank&) {
                                    if (i == 3) throw std::runtime_error("disk full");
                                  }),
               std::runtime_error);
  // The consumer's error stays the one reported when a rank being read
  // ahead (rank 5, slow) fails after it: as a serial loop.
  SlowBadFifth slow(t);
  for (int round = 0; round < 5; ++round) {
    try {
      ForEachRankInOrder(slow, 3, 8, [&](size_t i, const Rank&) {
        if (i == 2) throw std::runtime_error("disk full");
      });
      FAIL() << "no error";
    } catch (const InputError& e) {
      FAIL() << "the read error replaced the consumer's: " << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "disk full");
    }
  }
}

}  // namespace
}  // namespace moetrace
