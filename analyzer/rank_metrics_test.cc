// Hand-built traces whose answers are worked out by hand in each test.
#include "analyzer/rank_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "formats/sample_trace.h"

namespace moetrace {
namespace {

// Builds one rank; tracks are referred to by index (AddTrack may reallocate).
class RankBuilder {
 public:
  size_t Stream(const char* name) {
    r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, name);
    return r.tracks.size() - 1;
  }
  size_t Thread(const char* name) {
    r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, name);
    return r.tracks.size() - 1;
  }
  Event& Add(size_t track, Category cat, TimeNs ts, TimeNs dur, int64_t corr = -1,
             const char* name = "op") {
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.category = cat;
    e.correlation = corr;
    e.name = r.strings.Intern(name);
    r.tracks[track].events.Append(e);
    scratch_ = e;
    return scratch_;
  }
  // Appends an op that references a new CommRecord.
  void AddComm(size_t track, Category cat, TimeNs ts, TimeNs dur, CommRecord rec,
               const char* name = "comm", int32_t layer = kNone) {
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.category = cat;
    e.name = r.strings.Intern(name);
    e.layer = layer;
    e.comm = static_cast<int32_t>(r.tracks[track].comms.size());
    r.tracks[track].comms.push_back(std::move(rec));
    r.tracks[track].events.Append(e);
  }
  void Launch(size_t thread, TimeNs ts, TimeNs dur, int64_t corr) {
    Add(thread, Category::kLaunch, ts, dur, corr, "launch");
  }
  void Marker(size_t thread, TimeNs ts, TimeNs dur, int32_t step) {
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.category = Category::kMarker;
    e.flags = kFlagStepMarker;
    e.step = step;
    e.name = r.strings.Intern("ProfilerStep#" + std::to_string(step));
    r.tracks[thread].events.Append(e);
  }
  RankMetrics Run() {
    RankScratch s;
    return AnalyzeRank(r, &s);
  }
  Rank r;

 private:
  Event scratch_;
};

void ExpectPartition(const BreakdownNs& b) {
  EXPECT_EQ(b.span, b.compute + b.comm_exposed + b.copy_exposed + b.free);
  EXPECT_EQ(b.comm, b.comm_overlapped + b.comm_exposed);
  EXPECT_EQ(b.host_bound, b.host_bound_sync + b.host_bound_dispatch);
  EXPECT_LE(b.host_bound, b.free);
  EXPECT_GE(b.free, 0);
  EXPECT_GE(b.comm_exposed, 0);
  EXPECT_GE(b.copy_exposed, 0);
}

TEST(Breakdown, OverlappingNestedTouchingIntervals) {
  RankBuilder b;
  size_t c0 = b.Stream("compute0"), c1 = b.Stream("compute1"), comm = b.Stream("comm"),
         copy = b.Stream("copy");
  b.Add(c0, Category::kCompute, 0, 100);
  b.Add(c0, Category::kCompute, 100, 50);   // touches [0,100)
  b.Add(c1, Category::kCompute, 110, 10);   // nested in [100,150)
  b.Add(c0, Category::kCompute, 300, 10);
  b.Add(comm, Category::kCollective, 50, 150);  // [50,200)
  b.Add(copy, Category::kCopy, 180, 80);        // [180,260)
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 1u);  // no markers: one step
  const BreakdownNs& t = m.total;
  // Window [0, 310). COMPUTE = [0,150) + [300,310) = 160; COMM = 150;
  // COMPUTE u COMM = [0,200) + [300,310) = 210; busy adds [200,260) = 270.
  EXPECT_EQ(t.span, 310);
  EXPECT_EQ(t.compute, 160);
  EXPECT_EQ(t.comm, 150);
  EXPECT_EQ(t.comm_exposed, 50);     // [150,200)
  EXPECT_EQ(t.comm_overlapped, 100); // [50,150)
  EXPECT_EQ(t.copy_exposed, 60);     // [200,260)
  EXPECT_EQ(t.free, 40);             // [260,300)
  EXPECT_EQ(t.host_bound, 0);
  ExpectPartition(t);
}

// More than 8 streams take the heap merge instead of the pairwise one.
TEST(Breakdown, ManyStreams) {
  RankBuilder b;
  std::vector<size_t> streams;
  for (int i = 0; i < 11; ++i) streams.push_back(b.Stream(("s" + std::to_string(i)).c_str()));
  for (int i = 0; i < 10; ++i) b.Add(streams[static_cast<size_t>(i)], Category::kCompute, 100 * i, 150);
  b.Add(streams[0], Category::kCompute, 1300, 100);
  CommRecord rec;
  rec.kind = CollectiveKind::kAllReduce;
  b.AddComm(streams[10], Category::kCollective, 1000, 200, rec);
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 1u);
  // COMPUTE = [0,1050) + [1300,1400); COMM = [1000,1200).
  const BreakdownNs& t = m.total;
  EXPECT_EQ(t.span, 1400);
  EXPECT_EQ(t.compute, 1150);
  EXPECT_EQ(t.comm, 200);
  EXPECT_EQ(t.comm_exposed, 150);
  EXPECT_EQ(t.comm_overlapped, 50);
  EXPECT_EQ(t.free, 100);
  ExpectPartition(t);
  EXPECT_EQ(m.overlap.computing, 1150);
  EXPECT_EQ(m.overlap.computing_segments, 2);
  EXPECT_EQ(m.overlap.comm_not_overlapped, 150);
  EXPECT_EQ(m.overlap.free, 100);
  EXPECT_EQ(m.overlap.free_segments, 1);
}

// Exactly four streams are merged inside the sweep; one runs out first and
// the other three finish through a merge of the rest. Two comm classes and
// a receive make the sweep list the items of the smaller unions too.
TEST(Breakdown, FourStreamsMergedInTheSweep) {
  RankBuilder b;
  const size_t s0 = b.Stream("compute"), s1 = b.Stream("compute2"), s2 = b.Stream("comm"),
               s3 = b.Stream("copy");
  b.Add(s0, Category::kCompute, 0, 100);
  b.Add(s0, Category::kCompute, 500, 100);
  b.Add(s1, Category::kCompute, 50, 100);
  CommRecord dp;
  dp.kind = CollectiveKind::kAllReduce;
  dp.comm_class = CommClass::kDP;
  b.AddComm(s2, Category::kCollective, 120, 180, dp);
  CommRecord recv;
  recv.kind = CollectiveKind::kRecv;
  recv.comm_class = CommClass::kPP;
  b.AddComm(s2, Category::kP2P, 400, 50, recv);
  b.Add(s3, Category::kCopy, 280, 40);
  b.Add(s3, Category::kCopy, 700, 10);
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 1u);
  // COMPUTE = [0,150) + [500,600); COMM = [120,300) + [400,450);
  // busy adds the copies [300,320) and [700,710).
  const BreakdownNs& t = m.total;
  EXPECT_EQ(t.span, 710);
  EXPECT_EQ(t.compute, 250);
  EXPECT_EQ(t.comm, 230);
  EXPECT_EQ(t.comm_overlapped, 30);  // [120,150)
  EXPECT_EQ(t.comm_exposed, 200);
  EXPECT_EQ(t.copy_exposed, 30);     // [300,320) + [700,710)
  EXPECT_EQ(t.free, 230);
  EXPECT_EQ(t.bubble, 50);           // the receive, no compute under it
  ExpectPartition(t);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kDP)].total, 180);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kDP)].exposed, 150);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kPP)].total, 50);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kPP)].exposed, 50);
  EXPECT_EQ(m.overlap.computing, 250);
  EXPECT_EQ(m.overlap.computing_segments, 2);
  EXPECT_EQ(m.device_ops, 7);
}

// Three to eight streams of unequal lengths (a real rank's layout) are
// merged two shortest first, here runs that are not neighbours (the
// sync-only stream gives an empty run), until two are left for the sweep.
TEST(Breakdown, UnequalStreamsMergedShortestFirst) {
  RankBuilder b;
  const size_t compute = b.Stream("compute"), comm = b.Stream("comm"), send = b.Stream("pp send"),
               recv = b.Stream("pp recv"), copy = b.Stream("copy"), sync = b.Stream("sync");
  for (TimeNs t : {0, 200, 400, 600}) b.Add(compute, Category::kCompute, t, 100);
  CommRecord dp;
  dp.kind = CollectiveKind::kAllReduce;
  dp.comm_class = CommClass::kDP;
  b.AddComm(comm, Category::kCollective, 50, 200, dp);
  CommRecord pp_send;
  pp_send.kind = CollectiveKind::kSend;
  pp_send.comm_class = CommClass::kPP;
  b.AddComm(send, Category::kP2P, 700, 20, pp_send);
  b.AddComm(send, Category::kP2P, 720, 20, pp_send);
  b.AddComm(send, Category::kP2P, 900, 50, pp_send);
  CommRecord pp_recv = pp_send;
  pp_recv.kind = CollectiveKind::kRecv;
  b.AddComm(recv, Category::kP2P, 350, 30, pp_recv);
  b.Add(copy, Category::kCopy, 500, 50);
  b.Add(copy, Category::kCopy, 960, 40);
  b.Add(sync, Category::kSync, 100, 10);
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 1u);
  // COMPUTE = [0,100) + [200,300) + [400,500) + [600,700) = 400;
  // COMM = [50,250) + [350,380) + [700,740) + [900,950) = 320;
  // COMPUTE u COMM = [0,300) + [350,380) + [400,500) + [600,740) + [900,950)
  // = 620; busy adds the copies [500,550) and [960,1000) = 710.
  const BreakdownNs& t = m.total;
  EXPECT_EQ(t.span, 1000);
  EXPECT_EQ(t.compute, 400);
  EXPECT_EQ(t.comm, 320);
  EXPECT_EQ(t.comm_exposed, 220);
  EXPECT_EQ(t.comm_overlapped, 100);  // [50,100) + [200,250)
  EXPECT_EQ(t.copy_exposed, 90);
  EXPECT_EQ(t.free, 290);
  EXPECT_EQ(t.bubble, 30);            // the receive [350,380)
  ExpectPartition(t);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kDP)].total, 200);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kDP)].exposed, 100);  // [100,200)
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kPP)].total, 120);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kPP)].exposed, 120);
  EXPECT_EQ(m.overlap.computing, 400);
  EXPECT_EQ(m.overlap.computing_segments, 4);
  EXPECT_EQ(m.device_ops, 11);
}

TEST(Breakdown, UnsortedInputGivesTheSameAnswer) {
  RankBuilder b;
  size_t c0 = b.Stream("compute0"), comm = b.Stream("comm");
  b.Add(c0, Category::kCompute, 300, 10);
  b.Add(c0, Category::kCompute, 100, 50);
  b.Add(c0, Category::kCompute, 0, 100);
  b.Add(comm, Category::kCollective, 120, 100);
  b.Add(comm, Category::kCollective, 50, 20);
  ASSERT_FALSE(b.r.tracks[c0].events.IsSortedByTime());
  RankMetrics m = b.Run();
  // Window [0,310): COMPUTE 160, COMM [50,70) + [120,220) = 120,
  // exposed [150,220) = 70, free [220,300) = 80.
  EXPECT_EQ(m.total.span, 310);
  EXPECT_EQ(m.total.compute, 160);
  EXPECT_EQ(m.total.comm, 120);
  EXPECT_EQ(m.total.comm_exposed, 70);
  EXPECT_EQ(m.total.free, 80);
  ExpectPartition(m.total);
}

TEST(Breakdown, EmptyStreamsAndZeroLengthOps) {
  RankBuilder b;
  b.Stream("empty");
  size_t c0 = b.Stream("compute");
  b.Stream("another empty");
  b.Add(c0, Category::kCompute, 0, 100);
  b.Add(c0, Category::kCompute, 200, 0);  // zero length: ends the window, costs nothing
  b.Add(c0, Category::kSync, 100, 50);    // a device-side wait: never busy
  b.Add(c0, Category::kMarker, 120, 0);
  RankMetrics m = b.Run();
  EXPECT_EQ(m.total.span, 200);
  EXPECT_EQ(m.total.compute, 100);
  EXPECT_EQ(m.total.free, 100);
  ExpectPartition(m.total);
}

TEST(Breakdown, NoDeviceOpsGivesNoStep) {
  RankBuilder b;
  size_t h = b.Thread("python");
  b.Launch(h, 0, 10, 1);
  RankMetrics m = b.Run();
  EXPECT_TRUE(m.steps.empty());
  EXPECT_EQ(m.total.span, 0);
}

TEST(HostBound, SyncVersusDispatch) {
  RankBuilder b;
  size_t s = b.Stream("compute");
  size_t main = b.Thread("python"), disp = b.Thread("dispatch");
  b.Add(s, Category::kCompute, 0, 100, 1);    // a
  b.Add(s, Category::kCompute, 300, 100, 2);  // b
  b.Add(s, Category::kCompute, 600, 100, 3);  // c
  b.Launch(main, -50, 40, 1);                 // L(a) = -10
  b.Add(main, Category::kSync, 20, 120, -1, "cudaStreamSynchronize");  // ends at 140
  b.Launch(main, 150, 100, 2);                // L(b) = 250
  b.Launch(main, 350, 30, 3);                 // enqueue of c ...
  b.Launch(disp, 450, 50, 3);                 // ... dequeue ends last: L(c) = 500
  RankMetrics m = b.Run();
  const BreakdownNs& t = m.total;
  // Waits: [100, min(300,250)) = 150, the sync ended at 140 inside
  // [100,250): sync kind. [400, min(600,500)) = 100, no sync: dispatch.
  EXPECT_EQ(t.span, 700);
  EXPECT_EQ(t.free, 400);
  EXPECT_EQ(t.host_bound, 250);
  EXPECT_EQ(t.host_bound_sync, 150);
  EXPECT_EQ(t.host_bound_dispatch, 100);
  ExpectPartition(t);
  // Launch delays start(b) - L(b): 10, 50, 100 (nearest rank percentiles).
  EXPECT_EQ(m.launch_count, 3);
  EXPECT_EQ(m.delay_p50, 50);
  EXPECT_EQ(m.delay_p90, 100);
  EXPECT_EQ(m.delay_p99, 100);
  EXPECT_EQ(m.device_ops, 3);
  EXPECT_EQ(m.ops_with_host_wait, 2);
}

// With a task queue the op's launch ends last on the dequeue thread, but
// the host stalled on the enqueue thread (the first to launch it): a sync
// there makes the wait of the sync kind. The device stream is track 0, so
// a launch table that lost the first thread (-1 slots read as track 0)
// finds no sync.
TEST(HostBound, SyncOnTheEnqueueThreadOfAQueuedLaunch) {
  RankBuilder b;
  size_t s = b.Stream("compute");
  size_t main = b.Thread("python"), disp = b.Thread("dequeue");
  b.Add(s, Category::kCompute, 0, 100, 1);    // a
  b.Add(s, Category::kCompute, 400, 100, 2);  // b
  b.Launch(main, -20, 10, 1);
  b.Add(main, Category::kSync, 150, 100, -1, "aclrtSynchronizeStream");  // ends at 250
  b.Launch(main, 260, 10, 2);                 // enqueue of b ...
  b.Launch(disp, 300, 50, 2);                 // ... dequeue ends last: L(b) = 350
  RankMetrics m = b.Run();
  // Wait [100, min(400, 350)) = 250, the enqueue thread's sync ended at
  // 250 inside it; the device is then idle [350, 400).
  EXPECT_EQ(m.total.span, 500);
  EXPECT_EQ(m.total.host_bound, 250);
  EXPECT_EQ(m.total.host_bound_sync, 250);
  EXPECT_EQ(m.total.host_bound_dispatch, 0);
  EXPECT_EQ(m.total.free, 300);
  ExpectPartition(m.total);
}

TEST(HostBound, OnlyCountsWhenTheWholeDeviceIsIdle) {
  RankBuilder b;
  size_t s0 = b.Stream("s0"), s1 = b.Stream("s1");
  size_t main = b.Thread("python");
  b.Add(s0, Category::kCompute, 0, 100, 1);
  b.Add(s0, Category::kCompute, 300, 100, 2);
  b.Launch(main, -20, 10, 1);
  b.Launch(main, 200, 80, 2);                  // L = 280: wait [100, 280)
  b.Add(s1, Category::kCompute, 150, 60);      // device busy [150, 210)
  RankMetrics m = b.Run();
  // H = [100,280); free = [100,150) + [210,300); H n free = 50 + 70.
  EXPECT_EQ(m.total.free, 140);
  EXPECT_EQ(m.total.host_bound, 120);
  EXPECT_EQ(m.total.host_bound_dispatch, 120);
  ExpectPartition(m.total);
}

TEST(Bubble, ExposedPipelineReceive) {
  RankBuilder b;
  size_t comm = b.Stream("p2p"), c = b.Stream("compute");
  CommRecord recv;
  recv.kind = CollectiveKind::kRecv;
  recv.comm_class = CommClass::kPP;
  b.AddComm(comm, Category::kP2P, 0, 100, recv, "recv_fwd");
  CommRecord send;
  send.kind = CollectiveKind::kSend;  // class derived: PP; a send is no bubble
  b.AddComm(comm, Category::kP2P, 100, 20, send, "send_fwd");
  b.Add(c, Category::kCompute, 50, 30);
  RankMetrics m = b.Run();
  // Span [0,120). Recv [0,100) minus compute [50,80) = 70.
  EXPECT_EQ(m.total.span, 120);
  EXPECT_EQ(m.total.bubble, 70);
  const ClassNs& pp = m.cls[static_cast<int>(CommClass::kPP)];
  EXPECT_EQ(pp.total, 120);
  EXPECT_EQ(pp.exposed, 90);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kEP)].total, 0);
  ExpectPartition(m.total);
}

TEST(CommClass, DerivedFromKindAndName) {
  RankBuilder b;
  size_t comm = b.Stream("comm"), c = b.Stream("compute");
  CommRecord a2a;
  a2a.kind = CollectiveKind::kAllToAllV;
  b.AddComm(comm, Category::kCollective, 0, 100, a2a, "alltoallv");
  CommRecord grad;
  grad.kind = CollectiveKind::kAllReduce;
  b.AddComm(comm, Category::kCollective, 100, 50, grad, "allreduce");  // no layer: DP
  b.Add(comm, Category::kCollective, 150, 50, -1, "ncclDevKernel_AllReduce_Sum");  // no record
  b.Add(c, Category::kCompute, 20, 50);
  RankMetrics m = b.Run();
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kEP)].total, 100);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kEP)].exposed, 50);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kDP)].total, 100);
  EXPECT_EQ(m.cls[static_cast<int>(CommClass::kDP)].exposed, 100);
}

TEST(Steps, WindowsFollowLaunchesInsideHostMarkers) {
  RankBuilder b;
  size_t s = b.Stream("compute");
  size_t h = b.Thread("python");
  b.Marker(h, 0, 1000, 0);
  b.Marker(h, 1000, 1000, 1);
  b.Launch(h, 50, 10, 1);
  b.Launch(h, 340, 5, 2);
  b.Launch(h, 1100, 50, 3);
  b.Add(s, Category::kCompute, 100, 200, 1);   // step 0
  b.Add(s, Category::kCompute, 350, 750, 2);   // step 0, runs into step 1's time
  b.Add(s, Category::kCompute, 1200, 300, 3);  // step 1
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 2u);
  // Step 0 = [100, 1200): compute 200 + 750, free [300,350) + [1100,1200).
  EXPECT_EQ(m.steps[0].step, 0);
  EXPECT_EQ(m.steps[0].start, 100);
  EXPECT_EQ(m.steps[0].b.span, 1100);
  EXPECT_EQ(m.steps[0].b.compute, 950);
  EXPECT_EQ(m.steps[0].b.free, 150);
  // Step 1 = [1200, 1500).
  EXPECT_EQ(m.steps[1].step, 1);
  EXPECT_EQ(m.steps[1].b.span, 300);
  EXPECT_EQ(m.steps[1].b.free, 0);
  EXPECT_EQ(m.total.span, 1400);
  for (const StepNs& st : m.steps) ExpectPartition(st.b);
}

// Launches that go back and forth between markers, before the first and
// after a marker's end, on two streams: each op gets the marker of its
// launch (step 0 gets an op after step 1's first; the second stream
// widens steps 0 and 1 the first left), and the ops of no step between
// step 1's last end and step 2 become a window of their own.
TEST(Steps, LaunchesBackAndForthAcrossMarkersAndStreams) {
  RankBuilder b;
  size_t s1 = b.Stream("compute");
  size_t s2 = b.Stream("compute2");
  size_t h = b.Thread("python");
  b.Marker(h, 1000, 500, 0);   // [1000, 1500]
  b.Marker(h, 2000, 1000, 1);  // [2000, 3000]
  b.Marker(h, 4000, 1000, 2);  // [4000, 5000]
  const TimeNs launch_at[] = {0, 1100, 2100, 1200, 500, 1700, 2500, 1050, 2600, 4100};
  for (int64_t c = 1; c <= 9; ++c) b.Launch(h, launch_at[c], 10, c);
  b.Add(s1, Category::kCompute, 1200, 100, 1);  // step 0
  b.Add(s1, Category::kCompute, 2200, 100, 2);  // step 1
  b.Add(s1, Category::kCompute, 2400, 100, 3);  // step 0 again (launched at 1200)
  b.Add(s1, Category::kCompute, 3000, 100, 6);  // step 1
  b.Add(s1, Category::kCompute, 3350, 30, 4);   // launched before the first marker: no step
  b.Add(s1, Category::kCompute, 3400, 50, 5);   // launched after step 0's marker ended: no step
  b.Add(s1, Category::kCompute, 4500, 100, 9);  // step 2
  b.Add(s2, Category::kCompute, 1100, 50, 7);   // step 0: its first op
  b.Add(s2, Category::kCompute, 3200, 100, 8);  // step 1: its last end, 3300
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 3u);
  // Step 0 = [1100, 2200): ops [1100, 1150) and [1200, 1300).
  EXPECT_EQ(m.steps[0].step, 0);
  EXPECT_EQ(m.steps[0].start, 1100);
  EXPECT_EQ(m.steps[0].b.span, 1100);
  EXPECT_EQ(m.steps[0].b.compute, 150);
  // Step 1 = [2200, 3300): four ops of 100 (step 0's late op among them).
  EXPECT_EQ(m.steps[1].step, 1);
  EXPECT_EQ(m.steps[1].start, 2200);
  EXPECT_EQ(m.steps[1].b.span, 1100);
  EXPECT_EQ(m.steps[1].b.compute, 400);
  // [3300, 4500) is in no step; step 2 = [4500, 4600).
  EXPECT_EQ(m.steps[2].step, 2);
  EXPECT_EQ(m.steps[2].start, 4500);
  EXPECT_EQ(m.steps[2].b.span, 100);
  EXPECT_EQ(m.steps[2].b.compute, 100);
  for (const StepNs& st : m.steps) ExpectPartition(st.b);
}

TEST(Steps, StampedStepWinsOverMarkers) {
  RankBuilder b;
  size_t s = b.Stream("compute");
  size_t h = b.Thread("python");
  b.Marker(h, 0, 1000, 0);
  b.Add(s, Category::kCompute, 100, 100);
  Event e;
  e.ts = 500;
  e.dur = 100;
  e.category = Category::kCompute;
  e.step = 4;  // stamped by the importer
  b.r.tracks[s].events.Append(e);
  RankMetrics m = b.Run();
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_EQ(m.steps[0].step, 0);
  EXPECT_EQ(m.steps[0].b.span, 400);  // [100, 500)
  EXPECT_EQ(m.steps[1].step, 4);
  EXPECT_EQ(m.steps[1].b.span, 100);
}

// An RL card: the actor update's steps 0 and 1 (stamped), between them the
// next iteration's rollout (no step, launched outside every step marker).
// Step 0's window ends at its own last op (300), not at step 1's first op
// (2000); the gap [300, 2000) is in no step. Without the rollout op the
// window runs to step 1 as before.
TEST(Steps, WorkOfNoStepBetweenStepsEndsTheWindowEarly) {
  auto card = [](bool rollout) {
    RankBuilder b;
    size_t s = b.Stream("compute");
    size_t c = b.Stream("hccl");
    size_t h = b.Thread("python");
    b.Marker(h, 0, 400, 0);
    b.Marker(h, 1900, 400, 1);
    auto stamped = [&](size_t track, Category cat, TimeNs ts, TimeNs dur, int32_t step) {
      Event e;
      e.ts = ts;
      e.dur = dur;
      e.category = cat;
      e.step = step;
      b.r.tracks[track].events.Append(e);
    };
    stamped(s, Category::kCompute, 100, 150, 0);     // [100, 250)
    stamped(c, Category::kCollective, 200, 100, 0);  // [200, 300): 50 exposed
    if (rollout) {
      b.Launch(h, 800, 5, 7);
      b.Add(s, Category::kCompute, 800, 600, 7);     // [800, 1400), step -1
    }
    stamped(s, Category::kCompute, 2000, 100, 1);    // [2000, 2100)
    return b.Run();
  };
  RankMetrics m = card(true);
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_EQ(m.steps[0].step, 0);
  EXPECT_EQ(m.steps[0].start, 100);
  EXPECT_EQ(m.steps[0].b.span, 200);
  EXPECT_EQ(m.steps[0].b.compute, 150);
  EXPECT_EQ(m.steps[0].b.comm_exposed, 50);
  EXPECT_EQ(m.steps[0].b.free, 0);
  EXPECT_EQ(m.steps[1].step, 1);
  EXPECT_EQ(m.steps[1].start, 2000);
  EXPECT_EQ(m.steps[1].b.span, 100);
  // The totals are the two steps' only: the rollout's 600 ns are in none.
  EXPECT_EQ(m.total.span, 300);
  EXPECT_EQ(m.total.compute, 250);
  for (const StepNs& st : m.steps) ExpectPartition(st.b);
  RankMetrics idle = card(false);
  ASSERT_EQ(idle.steps.size(), 2u);
  EXPECT_EQ(idle.steps[0].b.span, 1900);  // [100, 2000): idle time stays in the step
  EXPECT_EQ(idle.steps[0].b.free, 1700);
}

// Without step markers a rank is one step, except an RL card that never
// trains (a rollout-only card of separate pools): none.
TEST(Steps, RolloutOnlyCardHasNoStep) {
  auto card = [](const char* range) {
    RankBuilder b;
    size_t s = b.Stream("compute");
    size_t h = b.Thread("python");
    b.Add(h, Category::kMarker, 0, 1000, -1, range);
    b.Add(s, Category::kCompute, 100, 300);
    return b.Run();
  };
  const RankMetrics rollout = card("rollout/generate_sequences");
  EXPECT_TRUE(rollout.steps.empty());
  EXPECT_EQ(rollout.total.span, 0);
  EXPECT_EQ(rollout.device_ops, 1);
  const RankMetrics trains = card("actor/update_actor");
  ASSERT_EQ(trains.steps.size(), 1u);
  EXPECT_EQ(trains.steps[0].b.span, 300);
  const RankMetrics plain = card("forward");
  ASSERT_EQ(plain.steps.size(), 1u);
  EXPECT_EQ(plain.steps[0].b.span, 300);
}

TEST(Memory, PeakAndBreakdownAtPeak) {
  RankBuilder b;
  auto counter = [&](CounterKind k, std::vector<TimeNs> ts, std::vector<double> v) {
    Track& t = b.r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "mem");
    t.counter = k;
    t.sample_ts = std::move(ts);
    t.sample_value = std::move(v);
  };
  counter(CounterKind::kMemAllocated, {0, 10, 20}, {100, 500, 300});
  counter(CounterKind::kMemReserved, {0, 15}, {600, 800});
  counter(CounterKind::kMemActivations, {0, 5, 12}, {50, 250, 200});
  counter(CounterKind::kMemWeights, {0}, {40});
  counter(CounterKind::kMemSwap, {11}, {7});  // starts after the peak: 0 at it
  RankMetrics m = b.Run();
  EXPECT_EQ(m.memory.peak_allocated, 500);
  EXPECT_EQ(m.memory.peak_reserved, 800);
  EXPECT_EQ(m.memory.peak_time, 10);
  auto at = [&](CounterKind k) {
    for (auto& [kind, v] : m.memory.at_peak) if (kind == k) return v;
    return int64_t{-1};
  };
  EXPECT_EQ(at(CounterKind::kMemActivations), 250);
  EXPECT_EQ(at(CounterKind::kMemWeights), 40);
  EXPECT_EQ(at(CounterKind::kMemSwap), 0);
  EXPECT_EQ(at(CounterKind::kMemGradients), -1);  // not recorded: absent
}

TEST(Partition, HoldsOnEveryRankAndStepOfTheSampleTrace) {
  Trace t = MakeSampleTrace(4, 64, 7);
  RankScratch s;
  for (const Rank& r : t.ranks) {
    RankMetrics m = AnalyzeRank(r, &s);
    ASSERT_FALSE(m.steps.empty());
    ExpectPartition(m.total);
    for (const StepNs& st : m.steps) ExpectPartition(st.b);
    EXPECT_GT(m.total.compute, 0);
    EXPECT_GT(m.launch_count, 0);
  }
}

}  // namespace
}  // namespace moetrace

namespace moetrace {
namespace {

TEST(HostBound, SparseAndDescendingCorrelationIds) {
  // The SyncVersusDispatch trace with correlation ids far apart and
  // launches recorded in descending id order: same answers.
  for (int64_t stride : {int64_t{1}, int64_t{1} << 40}) {
    Rank r;
    r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "s");
    r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "main");
    auto add = [&](size_t t, Category c, TimeNs ts, TimeNs dur, int64_t corr) {
      Event e;
      e.ts = ts;
      e.dur = dur;
      e.category = c;
      e.correlation = corr;
      r.tracks[t].events.Append(e);
    };
    const int64_t c1 = 1000 * stride, c2 = 10 * stride, c3 = 7;
    add(0, Category::kCompute, 0, 100, c1);
    add(0, Category::kCompute, 300, 100, c2);
    add(0, Category::kCompute, 600, 100, c3);
    add(1, Category::kLaunch, 350, 150, c3);  // L = 500
    add(1, Category::kLaunch, 150, 100, c2);  // L = 250
    add(1, Category::kLaunch, -50, 40, c1);   // L = -10
    RankScratch s;
    RankMetrics m = AnalyzeRank(r, &s);
    EXPECT_EQ(m.launch_count, 3);
    EXPECT_EQ(m.total.host_bound, 250);
    EXPECT_EQ(m.total.host_bound_dispatch, 250);
    EXPECT_EQ(m.delay_p50, 50);
  }
}

}  // namespace
}  // namespace moetrace

namespace moetrace {
namespace {

// The Ascend profiler's Overlap Analysis: busy segments are the pieces of
// COMPUTE ∪ COMM over the whole rank (steps ignored); copies are Free.
TEST(AscendOverlap, SegmentsOfComputeAndCommWithCopiesAsFree) {
  RankBuilder b;
  size_t s0 = b.Stream("s0"), s1 = b.Stream("s1"), s2 = b.Stream("copy");
  // compute [100,200) [200,260) (touching: one segment) [400,500)
  b.Add(s0, Category::kCompute, 100, 100);
  b.Add(s0, Category::kCompute, 200, 60);
  b.Add(s0, Category::kCompute, 400, 100);
  // comm [240,300): 40 ns not overlapped; [600,650) alone
  CommRecord rec;
  rec.kind = CollectiveKind::kAllReduce;
  b.AddComm(s1, Category::kCollective, 240, 60, rec);
  b.AddComm(s1, Category::kCollective, 600, 50, rec);
  // a copy [320,380) in a gap, a zero-length compute op at 700: no segment
  b.Add(s2, Category::kCopy, 320, 60);
  b.Add(s0, Category::kCompute, 700, 0);
  RankMetrics m = b.Run();
  EXPECT_EQ(m.overlap.computing, 160 + 100);
  EXPECT_EQ(m.overlap.computing_segments, 2);
  EXPECT_EQ(m.overlap.comm_not_overlapped, 40 + 50);
  // Busy pieces [100,300) [400,500) [600,650): gaps 100 + 100 (the copy is
  // inside the first), and [650,700) to the zero-length task at 700: the
  // profiler's span runs over every device task.
  EXPECT_EQ(m.overlap.free, 250);
  EXPECT_EQ(m.overlap.free_segments, 3);
  // METRICS.md's partition counts the copy apart.
  EXPECT_EQ(m.total.copy_exposed, 60);
  EXPECT_EQ(m.total.span, 600);  // one step (no markers): [100, 700)
  EXPECT_EQ(m.total.free + m.total.copy_exposed, 200 + 50);  // + [650,700) to the last op
}

TEST(AscendOverlap, EmptyRank) {
  RankBuilder b;
  b.Stream("s0");
  RankMetrics m = b.Run();
  EXPECT_EQ(m.overlap.computing, 0);
  EXPECT_EQ(m.overlap.free, 0);
  EXPECT_EQ(m.overlap.free_segments, 0);
}

// Expert MaxVio of this rank's own routing records: micro-batches summed per
// (step, layer), mean over layers, then over steps.
TEST(RankExperts, MaxVioOverExpertsAndEpRanks) {
  Rank r;
  auto rec = [&](int32_t step, int32_t layer, std::vector<int64_t> tokens,
                 std::vector<int32_t> placement = {}) {
    RoutingRecord x;
    x.step = step;
    x.layer = layer;
    x.ep_size = 2;
    x.tokens_per_expert = std::move(tokens);
    x.expert_to_ep_rank = std::move(placement);
    r.routing.push_back(std::move(x));
  };
  // step 0, layer 1: two micro-batches summing to {4, 2, 1, 1}: mean 2, max 4
  // -> MaxVio 1; EP ranks {6, 2}: mean 4, max 6 -> 0.5.
  rec(0, 1, {3, 1, 0, 1});
  rec(0, 1, {1, 1, 1, 0});
  // step 0, layer 2: {2, 2, 2, 2} -> 0; placement {0, 0, 0, 1} -> {6, 2} -> 0.5.
  rec(0, 2, {2, 2, 2, 2}, {0, 0, 0, 1});
  // step 3, layer 1: {0, 0, 0, 8} -> 3; EP {0, 8} -> 1.
  rec(3, 1, {0, 0, 0, 8});
  std::vector<ExpertVio> steps;
  ExpertVio total;
  ASSERT_TRUE(RankExpertImbalance(r, &steps, &total));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_DOUBLE_EQ(steps[0].max_vio, 0.5);
  EXPECT_DOUBLE_EQ(steps[0].ep_max_vio, 0.5);
  EXPECT_EQ(steps[1].step, 3);
  EXPECT_DOUBLE_EQ(steps[1].max_vio, 3);
  EXPECT_DOUBLE_EQ(steps[1].ep_max_vio, 1);
  EXPECT_DOUBLE_EQ(total.max_vio, 1.75);
  EXPECT_DOUBLE_EQ(total.ep_max_vio, 0.75);
  Rank none;
  EXPECT_FALSE(RankExpertImbalance(none, &steps, &total));
  EXPECT_TRUE(steps.empty());
}

}  // namespace
}  // namespace moetrace
