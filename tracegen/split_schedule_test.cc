#include "tracegen/split_schedule.h"

#include <gtest/gtest.h>

#include <vector>

#include "tracegen/stage_split.h"

namespace moetrace::tracegen {
namespace {

std::vector<std::vector<PipeItem>> OneFOneB(int pp, int mbs) {
  std::vector<std::vector<PipeItem>> out;
  for (int s = 0; s < pp; ++s) out.push_back(StageSchedule({"1f1b", pp, 1, mbs}, s));
  return out;
}

// 4 layers, forward 1 and backward 2 each, on PP 2 with 2 micro-batches
// (1F1B: stage 0 runs F0 F1 B0 B1, stage 1 F0 B0 F1 B1).
SplitCosts FourLayers(double head_fwd, double head_bwd) {
  SplitCosts c;
  c.fwd = {1, 1, 1, 1};
  c.bwd = {2, 2, 2, 2};
  c.last_fwd = head_fwd;
  c.last_bwd = head_bwd;
  return c;
}

TEST(SplitSchedule, MakespanFollowsTheScheduleByHand) {
  const auto sched = OneFOneB(2, 2);
  // 2+2: stage 0's forwards end at 2 and 4, stage 1's F0 2-4, B0 4-8,
  // F1 8-10, B1 10-14; stage 0's B0 8-12, B1 14-18.
  EXPECT_EQ(PipelineMakespan(FourLayers(0, 0), {2, 2}, sched, 2), 18);
  EXPECT_EQ(PipelineMakespan(FourLayers(0, 0), {3, 1}, sched, 2), 18);
  // 1+3: stage 1's B1 ends at 19, stage 0's B1 19-21.
  EXPECT_EQ(PipelineMakespan(FourLayers(0, 0), {1, 3}, sched, 2), 21);
  // With an LM head (forward 1, backward 2) on the last slice.
  EXPECT_EQ(PipelineMakespan(FourLayers(1, 2), {2, 2}, sched, 2), 24);
  EXPECT_EQ(PipelineMakespan(FourLayers(1, 2), {3, 1}, sched, 2), 21);
  EXPECT_EQ(PipelineMakespan(FourLayers(1, 2), {4, 0}, sched, 2), 24);
  // A split of other layers is refused.
  EXPECT_LT(PipelineMakespan(FourLayers(0, 0), {2, 1}, sched, 2), 0);
}

TEST(SplitSchedule, PipelineSplitBeatsTheRankSumTie) {
  // With the head, 2+2 and 3+1 tie on every key of the ranks' work (9 and
  // 6 either way round), so BalancedSplit keeps the even 2+2; run by the
  // schedule 3+1 ends at 21 instead of 24.
  const SplitCosts c = FourLayers(1, 2);
  const std::vector<double> total = {3, 3, 3, 3};
  EXPECT_EQ(BalancedSplit(total, 0, 3, 2, 2), (std::vector<int>{2, 2}));
  const auto sched = OneFOneB(2, 2);
  EXPECT_EQ(PipelineSplit(c, {{2, 2}}, sched, 2), (std::vector<int>{3, 1}));
  // From the padding-like 4+0 too; a start of another shape is skipped.
  EXPECT_EQ(PipelineSplit(c, {{1, 1, 2}, {4, 0}}, sched, 2), (std::vector<int>{3, 1}));
  // The first start is kept on a tie: without the head 2+2 and 3+1 both end at 18.
  EXPECT_EQ(PipelineSplit(FourLayers(0, 0), {{3, 1}, {2, 2}}, sched, 2), (std::vector<int>{3, 1}));
}


// 3 layers, forward 1 and backward 2 each, the LM head (1 and 2) on the
// last slice and one MTP layer twice as heavy (2 and 4), on PP 3 with 2
// micro-batches (1F1B: stages 0 and 1 run F0 F1 B0 B1, stage 2 F0 B0 F1 B1).
SplitCosts ThreeLayersAndMtp() {
  SplitCosts c;
  c.fwd = {1, 1, 1};
  c.bwd = {2, 2, 2};
  c.last_fwd = 1;
  c.last_bwd = 2;
  c.mtp_fwd = 2;
  c.mtp_bwd = 4;
  return c;
}

TEST(SplitSchedule, MtpLayerOnTheStageBeforeTheLossByHand) {
  const auto sched = OneFOneB(3, 2);
  SplitCosts c = ThreeLayersAndMtp();
  // MTP on the last slice (-1 or 2), 1+1+1: slice 2 forward 4, backward 8;
  // its F0 2-6, B0 6-14, F1 14-18, B1 18-26; slice 1's B1 26-28, slice 0's 28-30.
  EXPECT_EQ(PipelineMakespan(c, {1, 1, 1}, sched, 3), 30);
  c.mtp_stage = 2;
  EXPECT_EQ(PipelineMakespan(c, {1, 1, 1}, sched, 3), 30);
  // 2+1+0 with everything on the last slice: 27.
  c.mtp_stage = -1;
  EXPECT_EQ(PipelineMakespan(c, {2, 1, 0}, sched, 3), 27);
  // The MTP layer on slice 1, the last running the head only: 2+1+0 has
  // slice 1 at 3 and 6, slice 2 at 1 and 2; slice 1's B0 8-14, B1 14-20,
  // slice 0's B1 20-24.
  c.mtp_stage = 1;
  EXPECT_EQ(PipelineMakespan(c, {2, 1, 0}, sched, 3), 24);
  // 1+2+0: slice 1 at 4 and 8, its B1 17-25, slice 0's 25-27.
  EXPECT_EQ(PipelineMakespan(c, {1, 2, 0}, sched, 3), 27);
}

TEST(SplitSchedule, PipelineSplitChoosesTheMtpStage) {
  const auto sched = OneFOneB(3, 2);
  const SplitCosts c = ThreeLayersAndMtp();
  int mtp = -7;
  // Only the last slice: 1+1+1 (30) becomes 2+1+0 (27).
  EXPECT_EQ(PipelineSplit(c, {{1, 1, 1}}, sched, 3, {-1}, &mtp), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(mtp, -1);
  // With slice 1 allowed: the start's last layer moves to slice 1 (1+2+0,
  // 27), then one to slice 0 (2+1+0, 24); 3+0+0 ties at 24 and is not taken.
  EXPECT_EQ(PipelineSplit(c, {{1, 1, 1}}, sched, 3, {-1, 1}, &mtp), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(mtp, 1);
  // Without candidates, costs.mtp_stage is the one used.
  SplitCosts pinned = c;
  pinned.mtp_stage = 1;
  EXPECT_EQ(PipelineSplit(pinned, {{1, 1, 1}}, sched, 3, {}, &mtp), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(mtp, 1);
  // A light MTP layer stays where it is: on a tie the earlier candidate
  // (today's last slice) is kept.
  SplitCosts light = c;
  light.mtp_fwd = light.mtp_bwd = 0;
  EXPECT_EQ(PipelineSplit(light, {{1, 1, 1}}, sched, 3, {-1, 1}, &mtp), PipelineSplit(light, {{1, 1, 1}}, sched, 3));
  EXPECT_EQ(mtp, -1);
}

}  // namespace
}  // namespace moetrace::tracegen
