// Each graph transform on a small hand-built trace, with exact expected
// times and memory.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzer/replay/graph_replay.h"
#include "analyzer/replay/transforms/a2a_algorithm.h"
#include "analyzer/replay/transforms/expert_placement.h"
#include "analyzer/replay/transforms/host_dispatch.h"
#include "analyzer/replay/transforms/micro_batch.h"
#include "analyzer/replay/transforms/recompute.h"
#include "analyzer/replay/transforms/schedule.h"
#include "analyzer/replay/transforms/slow_rank.h"
#include "formats/errors.h"
#include "tracegen/config.h"

namespace moetrace::replay {
namespace {

// One rank: python thread, compute stream, comm stream, and memory counters
// (allocated = weights + activations + recompute).
struct Builder {
  Rank rank;
  int64_t corr = 0;
  Builder(int32_t r = 0) {
    rank.rank = r;
    rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python");        // 0
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "compute");  // 1
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "comm");        // 2
    rank.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "memory.allocated").counter =
        CounterKind::kMemAllocated;  // 3
    rank.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "memory.weights").counter =
        CounterKind::kMemWeights;  // 4
    rank.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "memory.activations").counter =
        CounterKind::kMemActivations;  // 5
    rank.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "memory.recompute").counter =
        CounterKind::kMemRecompute;  // 6
  }
  // A launch [ts, ts + launch) and its op on `track` [op_ts, op_ts + dur).
  void Op(const std::string& name, TimeNs ts, TimeNs launch, size_t track, TimeNs op_ts, TimeNs dur,
          Phase phase, int32_t mb, int32_t layer, int32_t step = 0, Category cat = Category::kCompute,
          int32_t comm = kNone, uint16_t flags = 0) {
    Event l;
    l.category = Category::kLaunch;
    l.name = rank.strings.Intern("launch " + name);
    l.ts = ts;
    l.dur = launch;
    l.correlation = ++corr;
    rank.tracks[0].events.Append(l);
    Event e;
    e.category = cat;
    e.name = rank.strings.Intern(name);
    e.ts = op_ts;
    e.dur = dur;
    e.correlation = corr;
    e.phase = phase;
    e.micro_batch = mb;
    e.layer = layer;
    e.step = step;
    e.comm = comm;
    e.flags = flags;
    rank.tracks[track].events.Append(e);
  }
  void Sample(size_t track, TimeNs ts, double v) {
    rank.tracks[track].sample_ts.push_back(ts);
    rank.tracks[track].sample_value.push_back(v);
  }
};

std::vector<std::pair<TimeNs, double>> Samples(const Track& t) {
  std::vector<std::pair<TimeNs, double>> out;
  for (size_t i = 0; i < t.sample_ts.size(); ++i) out.emplace_back(t.sample_ts[i], t.sample_value[i]);
  return out;
}

using S = std::vector<std::pair<TimeNs, double>>;

// ---- micro-batch ------------------------------------------------------------

// F0 F1 B0 B1 on one stream, activations 1000 per micro-batch, weights 500.
Trace TwoMicroBatches() {
  Builder b;
  b.Op("MatMul", 0, 10, 1, 10, 100, Phase::kForward, 0, 0);
  b.Op("MatMul", 10, 10, 1, 110, 100, Phase::kForward, 1, 0);
  b.Op("MatMulGrad", 20, 10, 1, 210, 200, Phase::kBackward, 0, 0);
  b.Op("MatMulGrad", 30, 10, 1, 410, 200, Phase::kBackward, 1, 0);
  b.Sample(4, 0, 500);
  b.Sample(5, 10, 1000);
  b.Sample(5, 110, 2000);
  b.Sample(5, 410, 1000);
  b.Sample(5, 610, 0);
  b.Sample(3, 0, 500);
  b.Sample(3, 10, 1500);
  b.Sample(3, 110, 2500);
  b.Sample(3, 410, 1500);
  b.Sample(3, 610, 500);
  Trace t;
  t.ranks.push_back(std::move(b.rank));
  return t;
}

TEST(MicroBatchTransform, MergesTwoMicroBatchesIntoOne) {
  Trace t = TwoMicroBatches();
  EXPECT_EQ(MicroBatchCount(t), 2);
  GraphModifications mods;
  ScaleMicroBatch(t, 2, Calibration{}, &mods.edits);
  Trace out = ReplayGraph(t, mods);
  const EventTable& dev = out.ranks[0].tracks[1].events;
  // F0 twice as long [10, 210); B0 twice as long after it [210, 610); the
  // second micro-batch's ops remain as empty markers.
  ASSERT_EQ(dev.size(), 4u);
  EXPECT_EQ(dev.ts[0], 10);
  EXPECT_EQ(dev.dur[0], 200);
  EXPECT_EQ(dev.dur[1], 0);
  EXPECT_EQ(dev.ts[2], 210);
  EXPECT_EQ(dev.dur[2], 400);
  EXPECT_EQ(dev.dur[3], 0);
  EXPECT_EQ(dev.End(3), 610);
  // The removed ops' launches cost nothing.
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[1], 0);
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[3], 0);
  // Activations: one micro-batch of twice the size.
  EXPECT_EQ(Samples(out.ranks[0].tracks[5]), (S{{10, 2000}, {610, 0}}));
  EXPECT_EQ(Samples(out.ranks[0].tracks[3]), (S{{0, 500}, {10, 2500}, {610, 500}}));
}

TEST(MicroBatchTransform, CalibratedKernelOverheadStaysFixed) {
  Trace t = TwoMicroBatches();
  Calibration cal;
  cal.known = true;
  cal.kernel_overhead_ns = 20;
  GraphModifications mods;
  ScaleMicroBatch(t, 2, cal, &mods.edits);
  Trace out = ReplayGraph(t, mods);
  EXPECT_EQ(out.ranks[0].tracks[1].events.dur[0], 20 + 80 * 2);
  EXPECT_EQ(out.ranks[0].tracks[1].events.dur[2], 20 + 180 * 2);
}

TEST(MicroBatchTransform, RejectsAFactorThatDoesNotDivide) {
  Trace t = TwoMicroBatches();
  EventEdits edits;
  EXPECT_THROW(ScaleMicroBatch(t, 3, Calibration{}, &edits), InputError);
  EXPECT_THROW(ScaleMicroBatch(t, 0.5, Calibration{}, &edits), InputError);
}

// ---- recompute -------------------------------------------------------------

RunSettings Shape() {
  RunSettings s;
  s.known = true;
  s.seq = 4;
  s.heads = 2;
  s.hidden = 8;
  s.mbs = 1;
  s.tp = 1;
  return s;  // scores 5*2*4*4 = 160 bytes; a layer's input 2*4*8 = 64 bytes
}

// One layer: attention forward [10, 110), an MLP forward [110, 160),
// the MLP backward [160, 260), attention backward [260, 460).
Trace OneLayer() {
  Builder b;
  b.Op("FlashAttentionScore", 0, 10, 1, 10, 100, Phase::kForward, 0, 0);
  b.Op("MatMul_down", 10, 10, 1, 110, 50, Phase::kForward, 0, 0);
  b.Op("MatMul_downGrad", 20, 10, 1, 160, 100, Phase::kBackward, 0, 0);
  b.Op("FlashAttentionScoreGrad", 30, 10, 1, 260, 200, Phase::kBackward, 0, 0);
  b.Sample(5, 10, 1000);
  b.Sample(5, 460, 0);
  b.Sample(3, 10, 1000);
  b.Sample(3, 460, 0);
  Trace t;
  t.ranks.push_back(std::move(b.rank));
  return t;
}

TEST(RecomputeTransform, SelectiveReRunsAttentionAndFreesTheScores) {
  Trace t = OneLayer();
  EXPECT_EQ(RecomputeOf(t), "none");
  GraphModifications mods;
  ChangeRecompute(t, "none", "selective", Shape(), &mods.edits);
  Trace out = ReplayGraph(t, mods);
  const EventTable& dev = out.ranks[0].tracks[1].events;
  EXPECT_EQ(dev.ts[3], 260);
  EXPECT_EQ(dev.dur[3], 300);  // its forward (100) first
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[3], 20);  // and its launch
  EXPECT_EQ(Samples(out.ranks[0].tracks[5]), (S{{10, 840}, {560, 0}}));
  EXPECT_EQ(Samples(out.ranks[0].tracks[6]), (S{{260, 160}, {560, 0}}));
  EXPECT_EQ(Samples(out.ranks[0].tracks[3]), (S{{10, 840}, {260, 1000}, {560, 0}}));
}

TEST(RecomputeTransform, FullReRunsTheLayerAndKeepsItsInput) {
  Trace t = OneLayer();
  GraphModifications mods;
  ChangeRecompute(t, "none", "full", Shape(), &mods.edits);
  Trace out = ReplayGraph(t, mods);
  const EventTable& dev = out.ranks[0].tracks[1].events;
  // The first backward op carries the forward (100 + 50) and both launches.
  EXPECT_EQ(dev.ts[2], 160);
  EXPECT_EQ(dev.dur[2], 250);
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[2], 30);
  EXPECT_EQ(dev.End(3), 610);
  EXPECT_EQ(Samples(out.ranks[0].tracks[5]), (S{{10, 64}, {610, 0}}));
  EXPECT_EQ(Samples(out.ranks[0].tracks[6]), (S{{160, 936}, {610, 0}}));
  EXPECT_EQ(Samples(out.ranks[0].tracks[3]), (S{{10, 64}, {160, 1000}, {610, 0}}));
}

TEST(RecomputeTransform, SelectiveToNoneDropsTheReRun) {
  Builder b;
  b.Op("FlashAttentionScore", 0, 10, 1, 10, 100, Phase::kForward, 0, 0);
  b.Op("FlashAttentionScore", 10, 10, 1, 110, 100, Phase::kRecompute, 0, 0);
  b.Op("FlashAttentionScoreGrad", 20, 10, 1, 210, 200, Phase::kBackward, 0, 0);
  b.Sample(5, 10, 840);
  b.Sample(5, 410, 0);
  b.Sample(6, 110, 160);
  b.Sample(6, 410, 0);
  b.Sample(3, 10, 840);
  b.Sample(3, 110, 1000);
  b.Sample(3, 410, 0);
  Trace t;
  t.ranks.push_back(std::move(b.rank));
  EXPECT_EQ(RecomputeOf(t), "selective");
  GraphModifications mods;
  ChangeRecompute(t, "selective", "none", Shape(), &mods.edits);
  Trace out = ReplayGraph(t, mods);
  const EventTable& dev = out.ranks[0].tracks[1].events;
  EXPECT_EQ(dev.dur[1], 0);
  EXPECT_EQ(dev.ts[2], 110);
  EXPECT_EQ(dev.End(2), 310);
  EXPECT_EQ(Samples(out.ranks[0].tracks[5]), (S{{10, 1000}, {310, 0}}));
  EXPECT_TRUE(out.ranks[0].tracks[6].sample_ts.empty());
  EXPECT_EQ(Samples(out.ranks[0].tracks[3]), (S{{10, 1000}, {310, 0}}));
}

TEST(RecomputeTransform, SwapOffRemovesTheCopiesAndTheirSavings) {
  Builder b;
  b.Op("MatMul", 0, 10, 1, 10, 100, Phase::kForward, 0, 0);
  b.Op("MemcpyD2H_swap_out", 10, 10, 2, 110, 50, Phase::kForward, 0, 0, 0, Category::kCopy, kNone,
       kFlagSwapOut);
  b.Op("MemcpyH2D_swap_in", 20, 10, 2, 160, 50, Phase::kBackward, 0, 0, 0, Category::kCopy, kNone,
       kFlagSwapIn);
  b.Op("MatMulGrad", 30, 10, 1, 210, 100, Phase::kBackward, 0, 0);
  // 600 swapped out at the copy's end (160), back at the swap-in's start (160).
  b.Sample(5, 10, 1000);
  b.Sample(5, 160, 400);
  b.Sample(5, 160, 1000);
  b.Sample(5, 310, 0);
  Trace t;
  t.ranks.push_back(std::move(b.rank));
  GraphModifications mods;
  EXPECT_EQ(RemoveSwap(t, &mods.edits), 2);
  Trace out = ReplayGraph(t, mods);
  EXPECT_EQ(out.ranks[0].tracks[2].events.dur[0], 0);
  EXPECT_EQ(out.ranks[0].tracks[2].events.dur[1], 0);
  // The backward no longer waits for the swap-in: [110, 210).
  EXPECT_EQ(out.ranks[0].tracks[1].events.ts[1], 110);
  EXPECT_EQ(Samples(out.ranks[0].tracks[5]), (S{{10, 1000}, {210, 0}}));
}

TEST(RecomputeTransform, SwapOnMovesWhatTheForwardTimeAllows) {
  Trace t = OneLayer();
  Calibration cal;
  cal.host_link_bw = 5e9;  // 5 bytes/ns: 150 ns of forward compute move 750 of the 1000 bytes
  GraphModifications mods;
  EXPECT_EQ(AddSwap(t, cal, &mods.edits), 1);
  Trace out = ReplayGraph(t, mods);
  // Freed when the copy ends (150 ns after the forward's last op), back at the backward's start.
  EXPECT_EQ(Samples(out.ranks[0].tracks[5]), (S{{10, 1000}, {160, 1750}, {310, 1000}, {460, 0}}));
  // One more launch for each copy.
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[1], 20);
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[2], 20);
  EXPECT_EQ(out.ranks[0].tracks[1].events.End(3), 460);
}

// ---- all-to-all algorithm ---------------------------------------------------

TEST(AllToAllTransform, TwoLevelCostOfAnEvenExchange) {
  // 4 members on 2 nodes, 100 bytes between every pair (and to itself);
  // HCCS 1 byte/ns, RoCE 0.1 byte/ns, alpha 5 / 20 ns, top-2.
  std::vector<std::vector<double>> send(4, std::vector<double>(4, 100));
  A2ACost c = AllToAllCost(send, {0, 0, 1, 1}, 5, 20, 1e9, 1e8, 2);
  // flat: 3 x 20 + 200 inter bytes x 10 ns.
  EXPECT_DOUBLE_EQ(c.flat, 60 + 2000);
  // hierarchical: 20 + (400/2)(1 - 0.5^2) x 10 + 5 + 400 x 1/2 x 1.
  EXPECT_DOUBLE_EQ(c.hierarchical, 20 + 1500 + 5 + 200);
  // Inside one node nothing changes.
  A2ACost one = AllToAllCost(send, {0, 0, 0, 0}, 5, 20, 1e9, 1e8, 2);
  EXPECT_DOUBLE_EQ(one.hierarchical, one.flat);
}

Trace FourRankAllToAll() {
  Trace t;
  t.metadata.layout.devices_per_node = 2;
  for (int r = 0; r < 4; ++r) {
    Builder b(r);
    CommRecord c;
    c.kind = CollectiveKind::kAllToAllV;
    c.comm_class = CommClass::kEP;
    c.group = b.rank.strings.Intern("ep_0");
    c.sequence = 0;
    c.group_size = 4;
    Track& comm = b.rank.tracks[2];
    c.group_ranks = comm.AddRanks(std::vector<int32_t>{0, 1, 2, 3});
    c.send_splits = comm.AddSplits(std::vector<uint64_t>{100, 100, 100, 100});
    c.recv_splits = comm.AddSplits(std::vector<uint64_t>{100, 100, 100, 100});
    comm.comms.push_back(c);
    // Rank r arrives at 10 + 10 r; all end at 1040 (transfer 1000 after the last).
    b.Op("HcomAllToAllV", 0, 10, 2, 10 + 10 * r, 1030 - 10 * r, Phase::kForward, 0, 1, 0,
         Category::kCollective, 0);
    t.ranks.push_back(std::move(b.rank));
  }
  return t;
}

TEST(AllToAllTransform, MeasuredBandwidthWithoutCalibration) {
  Trace t = FourRankAllToAll();
  Calibration cal;  // unknown device: the op's own bandwidth, HCCS/RoCE = 392/25
  cal.devices_per_node = 2;
  GraphModifications mods;
  EXPECT_EQ(HierarchicalAllToAll(t, cal, 2, &mods.edits), 1);
  // flat = 200 inter bytes / B = 1000 ns: B = 0.2 B/ns; hierarchical =
  // 150 / 0.2 + 200 / (0.2 * 392 / 25) = 750 + 63.78 -> x 0.81378.
  Trace out = ReplayGraph(t, mods);
  const double T = 1000 * (750 + 200 / (0.2 * 392 / 25)) / 1000;
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(out.ranks[r].tracks[2].events.End(0), 40 + std::llround(T)) << r;
  }
}

// ---- expert placement -------------------------------------------------------

TEST(ExpertPlacementTransform, BalancesTheSecondStepOnTheFirstsLoads) {
  // EP 2, 4 experts; every rank routes 300, 300, 100, 100 tokens per step:
  // contiguous placement gives rank 0 1200 tokens and rank 1 400.
  Trace t;
  for (int r = 0; r < 2; ++r) {
    Builder b(r);
    for (int step = 0; step < 2; ++step) {
      CommRecord c;
      c.kind = CollectiveKind::kAllToAllV;
      c.comm_class = CommClass::kEP;
      c.group = b.rank.strings.Intern("ep_0");
      c.sequence = step;
      c.group_size = 2;
      c.group_ranks = b.rank.tracks[2].AddRanks(std::vector<int32_t>{0, 1});
      b.rank.tracks[2].comms.push_back(c);
      const TimeNs t0 = 10000 * step;
      b.Op("HcomAllToAllV_dispatch", t0, 10, 2, t0 + 10, 300, Phase::kForward, 0, 1, step,
           Category::kCollective, step);
      b.Op("GroupedMatmul_gate_up", t0 + 10, 10, 1, t0 + 310, r == 0 ? 1200 : 400, Phase::kForward, 0,
           1, step);
      RoutingRecord rr;
      rr.step = step;
      rr.micro_batch = 0;
      rr.layer = 1;
      rr.ep_size = 2;
      rr.tokens_per_expert = {300, 300, 100, 100};
      b.rank.routing.push_back(rr);
    }
    t.ranks.push_back(std::move(b.rank));
  }
  GraphModifications mods;
  EXPECT_EQ(RebalanceExperts(t, Calibration{}, &mods.edits), 1);  // step 1 only
  // Step 1: placement 0,1,1,0 -> 800 tokens each; the all-to-all's worst
  // link carries 400 instead of 600 tokens.
  const auto& dur = mods.edits.dur;
  EXPECT_EQ(dur[0][1][1], 800);
  EXPECT_EQ(dur[1][1][1], 800);
  EXPECT_EQ(dur[0][2][1], 200);
  EXPECT_EQ(dur[1][2][1], 200);
  // Step 0 keeps its recorded placement.
  EXPECT_EQ(dur[0][1][0], 1200);
  EXPECT_EQ(dur[0][2][0], 300);
}

// ---- host dispatch ----------------------------------------------------------

// Two launches as atlas-800t-a2 records them without the task queue: each
// call framework + launch = 12 + 18.46 = 30.46 us on the Python thread.
Trace TwoLaunches() {
  Builder b;
  b.Op("MatMul", 0, 30460, 1, 30460, 1000, Phase::kForward, 0, 0);
  b.Op("MatMul", 30460, 30460, 1, 60920, 1000, Phase::kForward, 0, 0);
  Trace t;
  t.metadata.device = "Ascend 910B";  // atlas-800t-a2: framework 12 us, launch 18.46, enqueue 2.5
  t.ranks.push_back(std::move(b.rank));
  return t;
}

TEST(HostDispatchTransform, TaskQueueSplitsTheLaunch) {
  Trace t = TwoLaunches();
  const Calibration cal = CalibrationFor(t.metadata);
  ASSERT_TRUE(cal.known);
  EXPECT_EQ(cal.preset, "atlas-800t-a2");
  GraphModifications mods;
  SetTaskQueue(t, true, cal, &mods);
  // The call's launch share, 30.46 us x 18.46 / 30.46, moves to the dequeue
  // thread; the Python thread keeps framework + enqueue, 14.5 us per call.
  EXPECT_EQ(mods.launch_lag_ns, 18460);
  Trace out = ReplayGraph(t, mods);
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[0], 14500);
  EXPECT_EQ(out.ranks[0].tracks[0].events.ts[1], 14500);
  EXPECT_EQ(out.ranks[0].tracks[1].events.ts[0], 14500 + 18460);
  // The second dequeue waits for the first (ends 32,960; its enqueue ended at
  // 29,000), so the op starts at 32,960 + 18,460 (the first op ended at
  // 33,960); a fixed lag gave 29,000 + 18,460 = 47,460.
  EXPECT_EQ(out.ranks[0].tracks[1].events.ts[1], 32960 + 18460);
}

TEST(HostDispatchTransform, NumaBindingDividesHostCosts) {
  Trace t = TwoLaunches();
  GraphModifications mods;
  SetNumaBinding(true, CalibrationFor(t.metadata), &mods);
  // atlas-800t-a2's cross_numa_factor: 3.65 (was 1.35; now solved from
  // ASCEND.md's stall 2.1 -> 0.6 ms, tracegen/hardware/atlas_800t_a2.json).
  EXPECT_DOUBLE_EQ(mods.host_factor, 1 / 3.65);
  Trace out = ReplayGraph(t, mods);
  EXPECT_EQ(out.ranks[0].tracks[1].events.ts[1], 2 * std::llround(30460 / 3.65));
  EXPECT_EQ(out.ranks[0].tracks[1].events.ts[1], 16690);  // 2 x 8,345.2
}

// ---- slow rank --------------------------------------------------------------

TEST(SlowRankTransform, RankRunsAtItsPeersMedian) {
  Trace t;
  const TimeNs durs[3][2] = {{100, 200}, {120, 180}, {300, 400}};
  for (int r = 0; r < 3; ++r) {
    Builder b(r);
    b.Op("MatMul", 0, 10, 1, 10, durs[r][0], Phase::kForward, 0, 0);
    b.Op("MatMulGrad", 10, 10, 1, 10 + durs[r][0], durs[r][1], Phase::kBackward, 0, 0);
    t.ranks.push_back(std::move(b.rank));
  }
  GraphModifications mods;
  EXPECT_EQ(MatchPeers(t, 2, &mods.edits), 2);
  Trace out = ReplayGraph(t, mods);
  // Median of two peers: the upper one (nth_element at size / 2).
  EXPECT_EQ(out.ranks[2].tracks[1].events.dur[0], 120);
  EXPECT_EQ(out.ranks[2].tracks[1].events.dur[1], 200);
  EXPECT_EQ(out.ranks[2].tracks[1].events.End(1), 330);
  EXPECT_THROW(MatchPeers(t, 7, &mods.edits), InputError);
}

// ---- schedule -----------------------------------------------------------------

// Pipeline stage 0 of pp 2 with 2 micro-batches under 1F1B: F0 F1 B0 B1, each
// task compute -> all-to-all -> compute (forward 100/50/100, backward
// 200/50/200), launches of 10 back to back.
Trace OneStage() {
  tracegen::RunConfig c = tracegen::BuildConfig(
      {"tiny-moe", "", {"parallel.world_size=2", "parallel.dp=1", "parallel.ep=1", "parallel.global_batch_size=2"}, 1});
  Builder b(0);
  TimeNs launch = 0, compute = 0, comm = 0;
  auto task = [&](int mb, bool backward) {
    const TimeNs x = backward ? 200 : 100;
    const Phase ph = backward ? Phase::kBackward : Phase::kForward;
    const std::string tag = std::string(backward ? "b" : "f") + std::to_string(mb);
    compute = std::max(compute, launch + 10);
    b.Op("x " + tag, launch, 10, 1, compute, x, ph, mb, 0);
    compute += x;
    launch += 10;
    comm = std::max({comm, compute, launch + 10});
    b.Op("a2a " + tag, launch, 10, 2, comm, 50, ph, mb, 0, 0, Category::kCollective, 0);
    comm += 50;
    launch += 10;
    compute = std::max({compute, comm, launch + 10});
    b.Op("z " + tag, launch, 10, 1, compute, x, ph, mb, 0);
    compute += x;
    launch += 10;
  };
  CommRecord ep;
  ep.kind = CollectiveKind::kAllToAllV;
  ep.comm_class = CommClass::kEP;
  b.rank.tracks[2].comms.push_back(ep);
  task(0, false);
  task(1, false);
  task(0, true);
  task(1, true);
  Trace t;
  t.metadata.config_json = tracegen::ConfigToJson(c);
  t.ranks.push_back(std::move(b.rank));
  return t;
}

std::vector<std::string> Timeline(const Rank& rank, size_t track) {
  std::vector<std::string> out;
  const EventTable& ev = rank.tracks[track].events;
  for (size_t i = 0; i < ev.size(); ++i) {
    out.push_back(std::string(rank.strings.Get(ev.name[i])) + " " + std::to_string(ev.ts[i]) + ".." +
                  std::to_string(ev.End(i)));
  }
  return out;
}

TEST(ScheduleTransform, SameOrderIsExact) {
  Trace t = OneStage();
  EXPECT_EQ(Timeline(t.ranks[0], 1).back(), "z b1 1210..1410");
  GraphModifications mods;
  ChangeSchedule(t, "interleaved", &mods);  // 1F1B at vpp 1
  Trace out = ReplayGraph(t, mods);
  EXPECT_EQ(Timeline(out.ranks[0], 1), Timeline(t.ranks[0], 1));
  EXPECT_EQ(Timeline(out.ranks[0], 2), Timeline(t.ranks[0], 2));
}

// Adaptive: F0, then F1 fused with B0 (tracegen's alternating segments,
// each ending at the expert all-to-all, the backward first: B0.x B0.a2a |
// F1.x F1.a2a | B0.z | F1.z; B0's all-to-all on the second stream), then B1.
TEST(ScheduleTransform, AdaptiveFusesForwardAndBackward) {
  Trace t = OneStage();
  GraphModifications mods;
  ChangeSchedule(t, "adaptive", &mods);
  Trace out = ReplayGraph(t, mods);
  EXPECT_EQ(Timeline(out.ranks[0], 1),
            (std::vector<std::string>{"x f0 10..110", "z f0 160..260", "x b0 260..460", "x f1 460..560",
                                      "z b0 560..760", "z f1 760..860", "x b1 860..1060",
                                      "z b1 1110..1310"}));
  EXPECT_EQ(Timeline(out.ranks[0], 2),
            (std::vector<std::string>{"a2a f0 110..160", "a2a b0 460..510", "a2a f1 560..610",
                                      "a2a b1 1060..1110"}));
  // The launches follow the new order: B0.x is issued 4th.
  const EventTable& py = out.ranks[0].tracks[0].events;
  EXPECT_EQ(std::string(out.ranks[0].strings.Get(py.name[3])), "launch x b0");
  EXPECT_EQ(py.End(3), 40);
}

TEST(ScheduleTransform, AnotherLayerSplitIsRefused) {
  Trace t = OneStage();
  GraphModifications mods;
  EXPECT_THROW(ChangeSchedule(t, "dualpipe", &mods), InputError);
  EXPECT_THROW(CheckVpp(t, 2), InputError);
  EXPECT_NO_THROW(CheckVpp(t, 1));
  t.metadata.config_json.clear();
  EXPECT_THROW(ChangeSchedule(t, "adaptive", &mods), InputError);
}

}  // namespace
}  // namespace moetrace::replay
