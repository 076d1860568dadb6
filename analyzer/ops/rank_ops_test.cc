// The operator view on hand-built traces whose totals are worked out by
// hand, and on a generated host-bound trace.
#include "analyzer/ops/rank_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>
#include <string>

#include "analyzer/analyze.h"
#include "analyzer/ops/ops_proto.h"
#include "analyzer/ops/ops_summary.h"
#include "analyzer/summary.h"
#include "formats/trace_io.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::ops {
namespace {

struct Builder {
  Rank r;
  size_t Track(TrackKind kind, const char* name) {
    r.AddTrack(kind, kind == TrackKind::kHostThread ? TrackRole::kHostMain : TrackRole::kDeviceCompute, name);
    return r.tracks.size() - 1;
  }
  void Op(size_t t, Category cat, const char* name, TimeNs ts, TimeNs dur, int64_t corr = -1,
          CommClass cls = CommClass::kOther) {
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.category = cat;
    e.name = r.strings.Intern(name);
    e.correlation = corr;
    if (cat == Category::kCollective) {
      CommRecord rec;
      rec.kind = CollectiveKind::kAllReduce;
      rec.comm_class = cls;
      e.comm = static_cast<int32_t>(r.tracks[t].comms.size());
      r.tracks[t].comms.push_back(rec);
    }
    r.tracks[t].events.Append(e);
  }
  void Launch(size_t t, TimeNs ts, TimeNs dur, int64_t corr) {
    Op(t, Category::kLaunch, "aclnnLaunch", ts, dur, corr);
  }
  void Marker(size_t t, TimeNs ts, TimeNs dur, int32_t step) {
    Event e;
    e.ts = ts;
    e.dur = dur;
    e.category = Category::kMarker;
    e.flags = kFlagStepMarker;
    e.step = step;
    e.name = r.strings.Intern("ProfilerStep#" + std::to_string(step));
    r.tracks[t].events.Append(e);
  }
};

RankOps Summarize(const Rank& rank, RankMetrics* m_out = nullptr) {
  RankScratch s;
  OpsScratch os;
  RankMetrics m = AnalyzeRank(rank, &s);
  RankOps ops = SummarizeOps(rank, m, s, &os);
  if (m_out) *m_out = std::move(m);
  return ops;
}

// Two steps of known ops on compute, comm and copy streams.
Rank KnownRank(int32_t id) {
  Builder b;
  b.r.rank = id;
  const size_t host = b.Track(TrackKind::kHostThread, "python");
  const size_t comp = b.Track(TrackKind::kDeviceStream, "compute");
  const size_t comm = b.Track(TrackKind::kDeviceStream, "comm");
  const size_t copy = b.Track(TrackKind::kDeviceStream, "copy");
  b.Marker(host, 0, 1000, 0);
  b.Marker(host, 1000, 1000, 1);
  b.Op(comp, Category::kCompute, "FlashAttentionScore", 0, 100);
  b.Op(comp, Category::kCompute, "GroupedMatmul", 100, 50);
  b.Op(comp, Category::kCompute, "GroupedMatmul", 150, 70);
  b.Op(comp, Category::kCompute, "MatMulV2", 220, 40);
  b.Op(comp, Category::kCompute, "Permute", 260, 20);
  b.Op(comp, Category::kCompute, "FlashAttentionScore", 1000, 300);
  b.Op(comp, Category::kCompute, "GroupedMatmul", 1300, 60);
  b.Op(comm, Category::kCollective, "hcom_allToAll_", 300, 200, -1, CommClass::kEP);
  b.Op(comm, Category::kCollective, "hcom_allReduce_", 1400, 80, -1, CommClass::kTP);
  b.Op(copy, Category::kCopy, "MEMCPY_ASYNC", 1500, 10);
  return std::move(b.r);
}

TEST(RankOps, KnownTotalsPerClassAndName) {
  const Rank rank = KnownRank(0);
  const RankOps ops = Summarize(rank);
  EXPECT_EQ(ops.steps, 2);
  const std::map<ViewClass, std::pair<int64_t, int64_t>> want = {
      {ViewClass::kFlashAttention, {2, 400}}, {ViewClass::kGroupedMatmul, {3, 180}},
      {ViewClass::kMatmul, {1, 40}},          {ViewClass::kVector, {1, 20}},
      {ViewClass::kCommEP, {1, 200}},         {ViewClass::kCommTP, {1, 80}},
      {ViewClass::kCopy, {1, 10}}};
  for (int c = 0; c < kViewClassCount; ++c) {
    const auto it = want.find(static_cast<ViewClass>(c));
    EXPECT_EQ(ops.class_count[c], it == want.end() ? 0 : it->second.first) << c;
    EXPECT_EQ(ops.class_total[c], it == want.end() ? 0 : it->second.second) << c;
  }
  ASSERT_EQ(ops.rows.size(), 7u);
  EXPECT_EQ(ops.distinct_names, 7);
  // Largest total first.
  EXPECT_EQ(rank.strings.Get(ops.rows[0].name), "FlashAttentionScore");
  EXPECT_EQ(ops.rows[0].count, 2);
  EXPECT_EQ(ops.rows[0].total, 400);
  EXPECT_EQ(ops.rows[0].p50, 100);  // nearest rank: k = ceil(0.5 * 2) = 1
  EXPECT_EQ(ops.rows[0].p99, 300);
  EXPECT_EQ(rank.strings.Get(ops.rows[1].name), "hcom_allToAll_");
  EXPECT_EQ(ops.rows[1].cls, ViewClass::kCommEP);
  EXPECT_EQ(rank.strings.Get(ops.rows[2].name), "GroupedMatmul");
  EXPECT_EQ(ops.rows[2].total, 180);
  EXPECT_EQ(ops.rows[2].p50, 60);   // k = 2 of {50, 60, 70}
  EXPECT_EQ(ops.rows[2].p99, 70);
  EXPECT_EQ(ops.rows[2].min, 50);
  EXPECT_EQ(ops.rows[2].max, 70);
  // Its histogram: 50 in [50, 52), 60 in [60, 62), 70 in [68, 72).
  ASSERT_EQ(ops.rows[2].hist_end - ops.rows[2].hist_begin, 3u);
  const auto* h = ops.buckets.data() + ops.rows[2].hist_begin;
  EXPECT_EQ(h[0], std::make_pair(LogHistogram::Bucket(50), int64_t{1}));
  EXPECT_EQ(h[1], std::make_pair(LogHistogram::Bucket(60), int64_t{1}));
  EXPECT_EQ(h[2], std::make_pair(LogHistogram::Bucket(70), int64_t{1}));
  EXPECT_EQ(ops.buckets.size(), 10u);  // 2 for FlashAttentionScore, 3 for GroupedMatmul, 1 for each other row
  EXPECT_EQ(rank.strings.Get(ops.rows[6].name), "MEMCPY_ASYNC");
}

// Exact p50 / p99 of a kept row whose durations vary widely: the first op
// sets the row's histogram window (8 octaves), the others spill below and
// above it, and the nearest ranks fall in wide buckets holding many
// distinct values (found by the gather of that bucket only). Checked
// against a sort of the same durations, and the histogram against a count.
TEST(RankOps, ExactPercentilesOfAJitteredRowMatchASort) {
  Builder b;
  const size_t comp = b.Track(TrackKind::kDeviceStream, "compute");
  std::vector<int64_t> durs;
  uint64_t x = 12345;
  TimeNs ts = 0;
  for (int k = 0; k < 3001; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    // 5 us first, then 3 ns .. ~1 ms: spread over 18 octaves.
    const int64_t d = k == 0 ? 5000 : static_cast<int64_t>(3 + (x >> 33) % (1 << 20));
    durs.push_back(d);
    b.Op(comp, Category::kCompute, "MatMulV2", ts, d);
    ts += d + 1;
  }
  const RankOps ops = Summarize(b.r);
  ASSERT_EQ(ops.rows.size(), 1u);
  std::vector<int64_t> sorted = durs;
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: k = ceil(0.5 * 3001) = 1501, ceil(0.99 * 3001) = 2971.
  EXPECT_EQ(ops.rows[0].p50, sorted[1500]);
  EXPECT_EQ(ops.rows[0].p99, sorted[2970]);
  EXPECT_EQ(ops.rows[0].min, sorted.front());
  EXPECT_EQ(ops.rows[0].max, sorted.back());
  std::map<uint32_t, int64_t> want;
  for (int64_t d : durs) ++want[LogHistogram::Bucket(d)];
  std::map<uint32_t, int64_t> got;
  for (uint32_t e = ops.rows[0].hist_begin; e + 1 < ops.rows[0].hist_end; ++e) {
    EXPECT_LT(ops.buckets[e].first, ops.buckets[e + 1].first);  // sorted by bucket
  }
  for (uint32_t e = ops.rows[0].hist_begin; e < ops.rows[0].hist_end; ++e) got[ops.buckets[e].first] += ops.buckets[e].second;
  EXPECT_EQ(got, want);
  EXPECT_EQ(want.size(), 130u);  // more buckets than the 128 of the window
}

// The other gather loop: the nearest ranks' bucket holds most of the row's
// ops (durations 992-1023 ns, one bucket, and a few far ones), so the gather
// keeps a duration with no branch. Checked against a sort.
TEST(RankOps, ExactPercentilesOfARowInOneWideBucketMatchASort) {
  Builder b;
  const size_t comp = b.Track(TrackKind::kDeviceStream, "compute");
  std::vector<int64_t> durs;
  uint64_t x = 777;
  TimeNs ts = 0;
  for (int k = 0; k < 2000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t d = k % 100 == 7 ? 50000 + k : 992 + static_cast<int64_t>((x >> 33) % 32);
    durs.push_back(d);
    b.Op(comp, Category::kCompute, "MatMulV2", ts, d);
    ts += d + 1;
  }
  const RankOps ops = Summarize(b.r);
  ASSERT_EQ(ops.rows.size(), 1u);
  std::vector<int64_t> sorted = durs;
  std::sort(sorted.begin(), sorted.end());
  // k = ceil(0.5 * 2000) = 1000, ceil(0.99 * 2000) = 1980: both in 992-1023.
  EXPECT_EQ(ops.rows[0].p50, sorted[999]);
  EXPECT_EQ(ops.rows[0].p99, sorted[1979]);
  EXPECT_EQ(LogHistogram::Bucket(sorted[999]), LogHistogram::Bucket(992));
  EXPECT_EQ(LogHistogram::Bucket(sorted[1979]), LogHistogram::Bucket(1023));
  EXPECT_EQ(ops.rows[0].count, 2000);
}

// The gather's three ways through a stream, each checked against a sort of
// the durations: a stream of one row's ops only (read without row ids); the
// same ops beside another row's (row ids read); the same with syncs on the
// stream whose durations fall in the p50 bucket (not busy ops: never
// gathered); and spread over 70 streams (more than the 64 stream marks).
enum class GatherLayout { kOneRow, kTwoRows, kWithSyncs, kSeventyStreams };

void ExpectExactPercentiles(const std::vector<int64_t>& durs, GatherLayout layout) {
  Builder b;
  std::vector<size_t> streams;
  const size_t n_streams = layout == GatherLayout::kSeventyStreams ? 70 : 1;
  for (size_t k = 0; k < n_streams; ++k) streams.push_back(b.Track(TrackKind::kDeviceStream, "compute"));
  std::vector<int64_t> sorted = durs;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = durs.size();
  const int64_t p50 = sorted[(n + 1) / 2 - 1], p99 = sorted[(n * 99 + 99) / 100 - 1];
  std::vector<TimeNs> ts(n_streams, 0);
  for (size_t k = 0; k < n; ++k) {
    const size_t st = k % n_streams;
    b.Op(streams[st], Category::kCompute, "MatMulV2", ts[st], durs[k]);
    ts[st] += durs[k] + 1;
    if (layout == GatherLayout::kTwoRows) {
      b.Op(streams[st], Category::kCompute, "Cast", ts[st], 3);
      ts[st] += 4;
    }
    if (layout == GatherLayout::kWithSyncs && k % 10 == 0) {
      Event e;
      e.ts = ts[st];
      e.dur = k % 20 == 0 ? p50 : p99;
      e.category = Category::kSync;
      e.name = b.r.strings.Intern("StreamSync");
      b.r.tracks[streams[st]].events.Append(e);
      ts[st] += e.dur + 1;
    }
  }
  const RankOps ops = Summarize(b.r);
  ASSERT_GE(ops.rows.size(), 1u);
  EXPECT_EQ(b.r.strings.Get(ops.rows[0].name), "MatMulV2");
  EXPECT_EQ(ops.rows[0].count, static_cast<int64_t>(n));
  EXPECT_EQ(ops.rows[0].p50, p50);
  EXPECT_EQ(ops.rows[0].p99, p99);
  if (layout == GatherLayout::kTwoRows) {
    ASSERT_EQ(ops.rows.size(), 2u);
    EXPECT_EQ(ops.rows[1].p50, 3);
  }
}

// Durations 992-1023 ns (one bucket) and a few far ones: the branch-free
// gather.
std::vector<int64_t> OneWideBucketDurations() {
  std::vector<int64_t> durs;
  uint64_t x = 777;
  for (int k = 0; k < 2000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    durs.push_back(k % 100 == 7 ? 50000 + k : 992 + static_cast<int64_t>((x >> 33) % 32));
  }
  return durs;
}

// 5-25 us, spread over ~38 buckets (analyze_bench's): the sparse gather.
std::vector<int64_t> SpreadDurations() {
  std::vector<int64_t> durs;
  uint64_t x = 4242;
  for (int k = 0; k < 3000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    durs.push_back(5000 + static_cast<int64_t>((x >> 33) % 20000));
  }
  return durs;
}

TEST(RankOps, ExactPercentilesWhateverTheStreamHolds) {
  for (GatherLayout layout : {GatherLayout::kOneRow, GatherLayout::kTwoRows, GatherLayout::kWithSyncs,
                              GatherLayout::kSeventyStreams}) {
    SCOPED_TRACE(static_cast<int>(layout));
    {
      SCOPED_TRACE("one wide bucket");
      ExpectExactPercentiles(OneWideBucketDurations(), layout);
    }
    {
      SCOPED_TRACE("spread");
      ExpectExactPercentiles(SpreadDurations(), layout);
    }
  }
}

// Gathered rows on two streams, after an empty device stream (no fold, so
// stream and track numbers differ): each row's exact percentiles come from
// its own stream's durations, as a sort of them says.
TEST(RankOps, GatherFindsEachRowOnItsStream) {
  Builder b;
  b.Track(TrackKind::kDeviceStream, "empty");
  const size_t comp = b.Track(TrackKind::kDeviceStream, "compute");
  b.Track(TrackKind::kHostThread, "python");
  const size_t comm = b.Track(TrackKind::kDeviceStream, "comm");
  std::vector<int64_t> mm, ar;
  TimeNs ts = 0;
  for (int k = 0; k < 300; ++k) {
    const int64_t d = 2000 + (k * 53) % 700;  // 2000..2699: several buckets
    mm.push_back(d);
    b.Op(comp, Category::kCompute, "MatMulV2", ts, d);
    const int64_t c = 1000 + (k * 29) % 300;  // 1000..1299
    ar.push_back(c);
    b.Op(comm, Category::kCollective, "hcom_allReduce_", ts, c, -1, CommClass::kTP);
    ts += 3000;
  }
  RankScratch s;
  OpsScratch os;
  RankMetrics m = AnalyzeRank(b.r, &s);
  // Streams folded: compute (track 1) then comm (track 3).
  ASSERT_EQ(s.op_fold.streams.size(), 2u);
  EXPECT_EQ(s.op_fold.streams[0].track, 1u);
  EXPECT_EQ(s.op_fold.streams[1].track, 3u);
  EXPECT_EQ(s.op_fold.streams[1].base, 300u);  // after the 0 + 300 events before it
  const RankOps ops = SummarizeOps(b.r, m, s, &os);
  ASSERT_EQ(ops.rows.size(), 2u);
  std::sort(mm.begin(), mm.end());
  std::sort(ar.begin(), ar.end());
  // Largest total first: MatMulV2. k = ceil(0.5 * 300) = 150, ceil(0.99 * 300) = 297.
  EXPECT_EQ(ops.rows[0].cls, ViewClass::kMatmul);
  EXPECT_EQ(ops.rows[0].p50, mm[149]);
  EXPECT_EQ(ops.rows[0].p99, mm[296]);
  EXPECT_EQ(ops.rows[1].cls, ViewClass::kCommTP);
  EXPECT_EQ(ops.rows[1].p50, ar[149]);
  EXPECT_EQ(ops.rows[1].p99, ar[296]);
}

// Zero-length ops in a row whose percentiles are known without a gather,
// beside a row that needs one: the gather must not count the zeros for the
// known row (review fix: its empty bucket range was [0, 0], so every zero
// was written past its one spare slot; ASan caught the heap overflow).
TEST(RankOps, ZeroDurationsBesideAGatheredRow) {
  Builder b;
  const size_t comp = b.Track(TrackKind::kDeviceStream, "compute");
  TimeNs ts = 0;
  for (int k = 0; k < 400; ++k) {
    b.Op(comp, Category::kCompute, "EmptyOp", ts, 0);
    ts += 1;
    const int64_t d = 1000 + (k * 37) % 500;  // 1000..1499: several 16th-octave buckets
    b.Op(comp, Category::kCompute, "MatMulV2", ts, d);
    ts += d + 1;
  }
  const RankOps ops = Summarize(b.r);
  ASSERT_EQ(ops.rows.size(), 2u);
  std::vector<int64_t> sorted;
  for (int k = 0; k < 400; ++k) sorted.push_back(1000 + (k * 37) % 500);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& row : ops.rows) {
    if (row.max == 0) {
      EXPECT_EQ(row.p50, 0);
      EXPECT_EQ(row.p99, 0);
    } else {
      EXPECT_EQ(row.p50, sorted[199]);  // k = ceil(0.5 * 400) = 200
      EXPECT_EQ(row.p99, sorted[395]);  // k = ceil(0.99 * 400) = 396
    }
  }
}

TEST(RankOps, ClassSharesSumToOneInTheJson) {
  Trace t;
  t.metadata.source = "test";
  t.ranks.push_back(KnownRank(0));
  t.ranks.push_back(KnownRank(1));
  MemorySource src(std::move(t));
  AnalyzeOptions opt;
  opt.threads = 2;
  const analysis::Analysis a = Analyze(src, opt);
  for (const analysis::Operators* o :
       {&a.ranks(0).operators(), &a.ranks(1).operators(), &a.cluster().operators()}) {
    double device = 0, compute = 0;
    for (const auto& c : o->classes()) {
      device += c.share_of_device();
      if (c.has_share_of_compute()) compute += c.share_of_compute();
    }
    EXPECT_NEAR(device, 1.0, 1e-12);
    EXPECT_NEAR(compute, 1.0, 1e-12);
    ASSERT_EQ(o->classes_size(), 7);
    EXPECT_EQ(o->classes(0).op_class(), "flash_attention");
    EXPECT_DOUBLE_EQ(o->classes(0).share_of_compute(), 400.0 / 640.0);
    EXPECT_DOUBLE_EQ(o->classes(0).share_of_device(), 400.0 / 930.0);
    EXPECT_FALSE(o->classes(4).has_share_of_compute());  // comm_EP
  }
  const analysis::Operators& c = a.cluster().operators();
  EXPECT_EQ(c.steps(), 2);
  EXPECT_EQ(c.classes(0).total_ns(), 800);     // two ranks
  EXPECT_EQ(c.classes(0).per_step_ns(), 400);  // over the cluster's 2 steps
  ASSERT_EQ(c.top_size(), 7);
  EXPECT_EQ(c.top(0).name(), "FlashAttentionScore");
  EXPECT_EQ(c.top(0).count(), 4);
  EXPECT_EQ(c.top(0).total_ns(), 800);
  EXPECT_EQ(c.top(0).mean_ns(), 200);
  // Cluster-wide from the merged histogram: the 2nd of {100, 100, 300, 300}
  // lies in bucket [100, 104), whose middle is 101; p99 in [288, 304),
  // middle 295 (exact per rank: 100 and 300).
  EXPECT_EQ(c.top(0).p50_ns(), 101);
  EXPECT_EQ(c.top(0).p99_ns(), 295);
  EXPECT_DOUBLE_EQ(c.top(0).share(), 800.0 / 1860.0);
  EXPECT_EQ(a.ranks(0).operators().top_size(), static_cast<int>(kRankTopRows));
  EXPECT_EQ(a.ranks(0).operators().top(2).p50_ns(), 60);
}

// One stream: a [0, 100) launched early, b launched late (L = 500) at
// [500, 600), c launched late (L = 650) at [650, 680). A second stream's d
// waits [300, 700) for its launch at L = 700, overlapping b's and c's waits.
TEST(RankOps, HostBoundNamesTheOpWhoseLaunchEndedTheWait) {
  Builder b;
  const size_t host = b.Track(TrackKind::kHostThread, "python");
  const size_t s0 = b.Track(TrackKind::kDeviceStream, "compute");
  const size_t s1 = b.Track(TrackKind::kDeviceStream, "compute2");
  b.Launch(host, -50, 40, 1);
  b.Launch(host, 400, 100, 2);
  b.Launch(host, 560, 90, 3);
  b.Launch(host, 650, 50, 4);
  b.Launch(host, -60, 10, 5);
  b.Op(s0, Category::kCompute, "A", 0, 100, 1);
  b.Op(s0, Category::kCompute, "SlowLaunched", 500, 100, 2);
  b.Op(s0, Category::kCompute, "Small", 650, 30, 3);
  b.Op(s1, Category::kCompute, "E", 0, 300, 5);
  b.Op(s1, Category::kCompute, "D", 700, 100, 4);
  RankMetrics m;
  const RankOps ops = Summarize(b.r, &m);
  // Busy: [0, 300) ∪ [500, 600) ∪ [650, 680) ∪ [700, 800). Waits: b [100,
  // 500), c [600, 650), d [300, 700). Host-bound = |H \ busy| = [300, 500)
  // + [600, 650) + [680, 700) = 270.
  EXPECT_EQ(m.total.host_bound, 270);
  // By first-started wait: b's [100, 500) takes [300, 500) = 200; d's
  // [300, 700) keeps [500, 700) \ busy = [600, 650) + [680, 700) = 70, and
  // c's [600, 650) lies inside d's, started earlier: 0.
  ASSERT_EQ(ops.dispatch.size(), 5u);
  auto name = [&](size_t i) { return std::string(b.r.strings.Get(ops.dispatch[i].name)); };
  EXPECT_EQ(name(0), "SlowLaunched");
  EXPECT_EQ(ops.dispatch[0].host_bound_ns, 200);
  EXPECT_EQ(ops.dispatch[0].count, 1);
  EXPECT_EQ(ops.dispatch[0].host_ns, 100);
  EXPECT_EQ(ops.dispatch[0].small, 0);  // 100 ns on device is not under 100 ns of launch
  EXPECT_EQ(ops.dispatch[0].device_ns, 100);
  EXPECT_EQ(name(1), "D");
  EXPECT_EQ(ops.dispatch[1].host_bound_ns, 70);
  // Then by host time: Small (90 ns launch, 30 ns on device: small), A, E.
  EXPECT_EQ(name(2), "Small");
  EXPECT_EQ(ops.dispatch[2].host_bound_ns, 0);
  EXPECT_EQ(ops.dispatch[2].small, 1);
  EXPECT_EQ(ops.dispatch[2].host_ns, 90);
  EXPECT_EQ(name(3), "A");
  EXPECT_EQ(name(4), "E");
  EXPECT_EQ(ops.dispatch[4].small, 0);
}

TEST(RankOps, OperatorTypeDropsTheInstanceNumber) {
  EXPECT_EQ(OperatorType("trans_Cast_13"), "trans_Cast");
  EXPECT_EQ(OperatorType("trans_Cast_0"), "trans_Cast");
  EXPECT_EQ(OperatorType("Conv2DBackpropFilter6"), "Conv2DBackpropFilter6");
  EXPECT_EQ(OperatorType("HcomAllToAllV_dispatch"), "HcomAllToAllV_dispatch");
  EXPECT_EQ(OperatorType("_12"), "_12");
  EXPECT_EQ(OperatorType("x_"), "x_");
  EXPECT_EQ(OperatorType(""), "");
  // Two instances of one type: one dispatch row, named by the type, while
  // the top operators keep the names.
  Builder b;
  const size_t host = b.Track(TrackKind::kHostThread, "python");
  const size_t s0 = b.Track(TrackKind::kDeviceStream, "compute");
  b.Launch(host, 0, 50, 1);
  b.Launch(host, 60, 70, 2);
  b.Op(s0, Category::kCompute, "trans_Cast_0", 50, 10, 1);
  b.Op(s0, Category::kCompute, "trans_Cast_13", 130, 20, 2);
  RankMetrics m;
  const RankOps ops = Summarize(b.r, &m);
  analysis::Operators o;
  FillOperators(ops, b.r.strings, &o);
  ASSERT_EQ(o.dispatch_size(), 1);
  EXPECT_EQ(o.dispatch(0).name(), "trans_Cast");
  EXPECT_EQ(o.dispatch(0).count(), 2);
  EXPECT_EQ(o.dispatch(0).host_ns(), 120);
  EXPECT_EQ(o.dispatch(0).mean_launch_ns(), 60);
  EXPECT_EQ(o.dispatch(0).small(), 2);
  EXPECT_EQ(o.dispatch(0).device_ns(), 30);
  EXPECT_EQ(o.dispatch(0).host_bound_ns(), 70);  // [60, 130): the wait for trans_Cast_13
  ASSERT_EQ(o.top_size(), 2);
  EXPECT_EQ(o.top(0).name(), "trans_Cast_13");
}

// tiny-moe without the task queue is host-bound on dispatch: the view names
// the dispatched type whose late launches ended most of that wait, and the
// shares of every type add up to the breakdown's host-bound time exactly.
TEST(RankOps, GeneratedHostBoundTraceNamesItsMostExpensiveDispatchedType) {
  tracegen::RunConfig config = tracegen::BuildConfig({"tiny-moe", "", {"host.task_queue=false"}, 1});
  MemorySink sink;
  tracegen::Generate(config, {0, 1}, sink);
  Trace trace = std::move(sink.trace());
  for (const Rank& rank : trace.ranks) {
    RankMetrics m;
    const RankOps ops = Summarize(rank, &m);
    int64_t sum = 0;
    for (const DispatchRow& d : ops.dispatch) sum += d.host_bound_ns;
    EXPECT_GT(m.total.host_bound, 0);
    EXPECT_EQ(sum, m.total.host_bound) << "rank " << rank.rank;
  }
  MemorySource src(std::move(trace));
  AnalyzeOptions opt;
  opt.threads = 1;
  const analysis::Analysis a = Analyze(src, opt);
  const analysis::Operators& o = a.cluster().operators();
  ASSERT_GT(o.dispatch_size(), 1);
  // Its ranks 0 and 1 wait longest for the EP dispatch all-to-all, launched
  // after the host reads the token counts (the whole run: HcomSend).
  EXPECT_EQ(o.dispatch(0).name(), "HcomAllToAllV_dispatch");
  EXPECT_GT(o.dispatch(0).host_bound_ns(), o.dispatch(1).host_bound_ns());
  const std::string summary = FormatSummary(a);
  EXPECT_NE(summary.find("host-bound on    " + o.dispatch(0).name() + ":"), std::string::npos) << summary;
}

}  // namespace
}  // namespace moetrace::ops

// Kineto writes shapes bracketed; Ascend's CSV does not.
TEST(OpLabel, BracketsOnlyShapesThatHaveNone) {
  const std::string kineto = "[[4096, 1024], [1024]]", ascend = "81920,4096;8192,512";
  EXPECT_EQ(moetrace::ops::OpLabel("aten::mm", &kineto), "aten::mm [[4096, 1024], [1024]]");
  EXPECT_EQ(moetrace::ops::OpLabel("MatMulV2", &ascend), "MatMulV2 [81920,4096;8192,512]");
  EXPECT_EQ(moetrace::ops::OpLabel("MatMulV2", nullptr), "MatMulV2");
}
