#include "bench/ep_sample.h"

#include <gtest/gtest.h>

namespace moetrace::bench {
namespace {

// Rank r with, in step 1, compute [0, 100) and an ExpertMigration [50, 200)
// on one device stream, and the same pair in step 0 (not measured).
Rank MigratingRank(int32_t r) {
  Rank rank;
  rank.rank = r;
  Track& t = rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "stream");
  const StringId gemm = rank.strings.Intern("MatMul"), mig = rank.strings.Intern("ExpertMigration");
  for (int step : {0, 1}) {
    const TimeNs base = step == 0 ? -1000 : 0;
    Event c;
    c.ts = base, c.dur = 100, c.name = gemm, c.category = Category::kCompute, c.step = step;
    t.events.Append(c);
    Event m;
    m.ts = base + 50, m.dur = 150, m.name = mig, m.category = Category::kCollective, m.step = step;
    t.events.Append(m);
  }
  return rank;
}

TEST(EpSample, LabelsOfTheGivenRanksAndStepOnly) {
  const std::vector<LabeledValue> labels = {
      {0, 1, "comm_by_class.EP.total_ns", 100}, {0, 1, "comm_by_class.EP.exposed_ns", 10},
      {1, 1, "comm_by_class.EP.total_ns", 100}, {1, 1, "comm_by_class.EP.exposed_ns", 30},
      {2, 1, "comm_by_class.EP.total_ns", 200}, {2, 1, "comm_by_class.EP.exposed_ns", 60},
      {1, 0, "comm_by_class.EP.total_ns", 999},  // step 0
      {5, 1, "comm_by_class.EP.total_ns", 999},  // rank not sampled
      {1, 1, "comm_by_class.TP.total_ns", 999}};
  EpSum rank0;
  AddEpLabels(labels, 1, {0}, &rank0);
  EXPECT_EQ(rank0.ranks, 1);
  EXPECT_DOUBLE_EQ(rank0.exposed / rank0.total, 0.10);
  // The whole group: (10 + 30 + 60) / (100 + 100 + 200), 2.5x rank 0's share.
  EpSum group;
  AddEpLabels(labels, 1, {0, 1, 2}, &group);
  EXPECT_EQ(group.ranks, 3);
  EXPECT_EQ(group.total, 400);
  EXPECT_EQ(group.exposed, 100);
  EXPECT_DOUBLE_EQ(group.A2AUnmasked(), 0.25);
}

TEST(EpSample, MigrationApartFromTheAllToAlls) {
  EpSum s;
  AddMigration(MigratingRank(3), 1, &s);
  EXPECT_EQ(s.mig_total, 150);   // [50, 200)
  EXPECT_EQ(s.mig_exposed, 100); // [100, 200): compute covers [50, 100)
  s.total = 1150, s.exposed = 200;
  EXPECT_DOUBLE_EQ(s.A2AUnmasked(), 0.10);  // (200 - 100) / (1150 - 150)
}

TEST(EpSample, SinkKeepsOnlyTheSampledRanksButMeasuresEvery) {
  SampleSink sink({0, 32}, 1);
  for (int32_t r : {0, 1, 2, 32, 33}) sink.AddRank(MigratingRank(r));
  Metadata m;
  m.ground_truth = {{33, 1, "comm_by_class.EP.total_ns", 7}};
  sink.Finish(m);
  ASSERT_EQ(sink.trace().ranks.size(), 2u);
  EXPECT_EQ(sink.trace().ranks[0].rank, 0);
  EXPECT_EQ(sink.trace().ranks[1].rank, 32);
  EXPECT_EQ(sink.trace().ranks[1].EventCount(), 4u);
  const EpSum all = sink.Migration({0, 1, 2, 32, 33});
  EXPECT_EQ(all.mig_total, 5 * 150.0);
  EXPECT_EQ(all.mig_exposed, 5 * 100.0);
  // A stage's group: its received ranks only (rank 3 never arrived).
  const EpSum stage0 = sink.Migration({0, 1, 2, 3});
  EXPECT_EQ(stage0.mig_total, 3 * 150.0);
  EXPECT_EQ(stage0.mig_exposed, 3 * 100.0);
  ASSERT_EQ(sink.trace().metadata.ground_truth.size(), 1u);
  EXPECT_EQ(sink.trace().metadata.ground_truth[0].rank, 33);
}

}  // namespace
}  // namespace moetrace::bench
