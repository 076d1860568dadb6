#include "formats/trace_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "formats/errors.h"
#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

// A source whose ranks at `bad_a` and `bad_b` cannot be read.
class TwoBadRanks : public MemorySource {
 public:
  TwoBadRanks(Trace t, size_t bad_a, size_t bad_b) : MemorySource(std::move(t)), a_(bad_a), b_(bad_b) {}
  Rank ReadRank(size_t i) const override {
    Rank r;
    ReadRankInto(i, &r);
    return r;
  }
  void ReadRankInto(size_t i, Rank* out) const override {
    if (i == a_ || i == b_) throw InputError("bad rank " + std::to_string(i));
    MemorySource::ReadRankInto(i, out);
  }

 private:
  size_t a_, b_;
};

TEST(TraceSummary, ThreadCountChangesNothing) {
  const Trace t = MakeSampleTrace(7, 16, 3);
  // What the summary must say, counted here from the ranks.
  int64_t events = 0, samples = 0;
  TimeNs lo = std::numeric_limits<TimeNs>::max(), hi = std::numeric_limits<TimeNs>::min();
  for (const Rank& r : t.ranks) {
    for (const Track& tr : r.tracks) {
      events += int64_t(tr.events.size());
      samples += int64_t(tr.sample_ts.size());
      for (size_t i = 0; i < tr.events.size(); ++i) {
        lo = std::min(lo, tr.events.ts[i]);
        hi = std::max(hi, tr.events.ts[i] + std::max<TimeNs>(tr.events.dur[i], 0));
      }
      for (TimeNs ts : tr.sample_ts) {
        lo = std::min(lo, ts);
        hi = std::max(hi, ts);
      }
    }
  }
  MemorySource src(t);
  const TraceSummary one = Summarize(src, {}, 1);
  EXPECT_EQ(one.events(), events);
  EXPECT_EQ(one.counter_samples, samples);
  EXPECT_EQ(one.start_ns, lo);
  EXPECT_EQ(one.end_ns, hi);
  ASSERT_EQ(one.rank_ids.size(), 7u);
  EXPECT_TRUE(std::is_sorted(one.rank_ids.begin(), one.rank_ids.end()));
  for (int threads : {2, 3, 7, 16}) {
    size_t calls = 0, last = 0;
    const TraceSummary many = Summarize(src, [&](size_t done, size_t n) {
      ++calls;
      EXPECT_EQ(n, 7u);
      EXPECT_EQ(done, last + 1);  // one at a time, counted in order
      last = done;
    }, threads);
    EXPECT_EQ(calls, 7u);
    EXPECT_EQ(SummaryToJson({many}), SummaryToJson({one})) << threads << " threads";
    EXPECT_EQ(SummaryToText(many), SummaryToText(one));
  }
}

// The native reader decodes into each worker's reused Rank: ranks of
// different sizes in turn (a large one after a small one and back) still
// give each rank's own counts, equal to the summary of the same ranks in
// memory, on any thread count.
TEST(TraceSummary, NativeRanksOfDifferentSizesOnReusedRanks) {
  Trace t = MakeSampleTrace(3, 200, 4);
  const Trace small = MakeSampleTrace(3, 5, 9);
  for (size_t i = 0; i < small.ranks.size(); ++i) {
    Rank r = small.ranks[i];
    r.rank = int32_t(100 + i);
    t.ranks.insert(t.ranks.begin() + std::ptrdiff_t(2 * i + 1), std::move(r));  // big, small, big, ...
  }
  const std::string path = ::testing::TempDir() + "summary_sizes.mtrace";
  {
    auto sink = CreateNativeSink(path);
    for (const Rank& r : t.ranks) sink->AddRank(r);
    sink->Finish(t.metadata);
  }
  MemorySource memory(t);
  const std::string want = SummaryToJson({Summarize(memory, {}, 1)});
  const auto native = OpenNative(path);
  for (int threads : {1, 2, 3}) EXPECT_EQ(SummaryToJson({Summarize(*native, {}, threads)}), want) << threads;
}

TEST(TraceSummary, BadRankReportedIsTheFirstInIndexOrder) {
  TwoBadRanks src(MakeSampleTrace(9, 4, 1), 3, 6);
  for (int round = 0; round < 20; ++round) {
    try {
      Summarize(src, {}, 4);
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_STREQ(e.what(), "bad rank 3");
    }
  }
}

TEST(TraceSummary, MergeWidensTheSpanOnlyWithEventsOrSamples) {
  TraceSummary into, a, none, at_zero;
  a.events_by_category[0] = 2;
  a.start_ns = 100;
  a.end_ns = 200;
  a.rank_ids = {5};
  a.steps = 2;
  MergeSummary(a, &into);  // into had nothing: takes a's span
  EXPECT_EQ(into.start_ns, 100);
  EXPECT_EQ(into.end_ns, 200);
  MergeSummary(none, &into);  // nothing read: the span stays
  EXPECT_EQ(into.start_ns, 100);
  EXPECT_EQ(into.end_ns, 200);
  at_zero.events_by_category[1] = 1;  // one event at 0 lasting 0: a span of [0, 0]
  at_zero.steps = 1;
  at_zero.rank_ids = {2};
  MergeSummary(at_zero, &into);
  EXPECT_EQ(into.start_ns, 0);
  EXPECT_EQ(into.end_ns, 200);
  EXPECT_EQ(into.events(), 3);
  EXPECT_EQ(into.steps, 2);
  EXPECT_EQ(into.rank_ids, (std::vector<int32_t>{5, 2}));
}

}  // namespace
}  // namespace moetrace
