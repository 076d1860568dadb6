#include "analyzer/replay/replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/replay/transforms/graph_knobs.h"
#include "formats/errors.h"
#include "formats/open_trace.h"
#include "formats/real_traces_dir.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::replay {
namespace {

Trace TinyMoe(const std::vector<std::string>& sets) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

int64_t MedianStep(const Trace& t) {
  MemorySource s(t);
  return MedianStepNs(Analyze(s));
}

double RelErr(double a, double b) { return std::abs(a - b) / b; }

// ---- graph mechanics on a hand-made trace ----------------------------------

// Two ranks: a host launch and a compute op, then an all-reduce both join.
Trace TwoRanks() {
  Trace t;
  t.metadata.source = "test";
  for (int r = 0; r < 2; ++r) {
    Rank rank;
    rank.rank = r;
    rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python");
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 0");
    Track& host = rank.tracks[0];
    Track& dev = rank.tracks[1];
    const StringId launch = rank.strings.Intern("launch");
    const StringId mm = rank.strings.Intern("MatMul");
    const StringId ar = rank.strings.Intern("HcomAllReduce");
    const StringId group = rank.strings.Intern("dp_0");
    // Launch of the matmul [0, 10), of the all-reduce [20, 30).
    Event e;
    e.category = Category::kLaunch;
    e.name = launch;
    e.ts = 0; e.dur = 10; e.correlation = 1;
    host.events.Append(e);
    e.ts = 20; e.dur = 10; e.correlation = 2;
    host.events.Append(e);
    // Matmul [10, 10 + 100 * (r + 1)); rank 1 is slower.
    Event m;
    m.category = Category::kCompute;
    m.name = mm;
    m.ts = 10; m.dur = 100 * (r + 1); m.correlation = 1;
    dev.events.Append(m);
    // All-reduce: starts at own arrival, ends at 210 + 50 on both ranks.
    CommRecord c;
    c.kind = CollectiveKind::kAllReduce;
    c.group = group;
    c.sequence = 0;
    c.group_size = 2;
    dev.comms.push_back(c);
    Event a;
    a.category = Category::kCollective;
    a.name = ar;
    a.ts = 10 + 100 * (r + 1); a.dur = 260 - a.ts; a.correlation = 2; a.comm = 0;
    dev.events.Append(a);
    t.ranks.push_back(std::move(rank));
  }
  return t;
}

TEST(GraphReplay, UnmodifiedIsExact) {
  Trace t = TwoRanks();
  GraphStats stats;
  Trace out = ReplayGraph(t, GraphModifications{}, &stats);
  EXPECT_EQ(out, t);
  EXPECT_EQ(stats.collectives_matched, 1);
  EXPECT_EQ(stats.forced, 0);
}

// The passes over ranks run on worker threads: 3 workers over tiny-moe's 16
// ranks give the one-worker trace and counts: faster matmuls with a slower
// host and no syncs, the added task queue (its edges on one worker), role
// keys, and a new schedule with recompute (re-ordered ranks, memory rebuilt).
TEST(GraphReplay, WorkerCountChangesNothing) {
  const Trace t = TinyMoe({"steps=2"});
  GraphModifications faster;
  faster.speed[int(OpClass::kMatmul)] = 1.5;
  faster.host_factor = 2;
  faster.remove_syncs = {"all"};
  GraphModifications queued;
  queued.launch_lag_ns = 5000;
  // Every rank its own role: pipeline transfers keyed by roles.
  GraphModifications roles = faster;
  for (int32_t r = 0; r < 16; ++r) roles.role_of.push_back(r);
  // Re-ordered ranks (the schedule) and memory counters rebuilt (recompute).
  const Trace vpp = TinyMoe({"steps=2", "schedule.kind=interleaved", "parallel.vpp=2"});
  GraphModifications reordered;
  ApplyGraphKnobs(vpp, {"schedule.kind=adaptive", "memory.recompute=full"}, &reordered);
  ASSERT_FALSE(reordered.order.empty());
  ASSERT_TRUE(reordered.edits.memory_edited);
  for (const auto& [input, mods] : {std::pair{&t, &faster}, std::pair{&t, &queued}, std::pair{&t, &roles},
                                    std::pair{&vpp, &reordered}}) {
    const Trace& t = *input;
    GraphStats one, three;
    const Trace a = ReplayGraph(t, *mods, &one, 1);
    const Trace b = ReplayGraph(t, *mods, &three, 3);
    EXPECT_NE(MedianStep(a), MedianStep(t));  // the modification moved the step
    EXPECT_TRUE(a == b);
    EXPECT_EQ(one.nodes, three.nodes);
    EXPECT_EQ(one.collectives_matched, three.collectives_matched);
    EXPECT_EQ(one.recvs_matched, three.recvs_matched);
    EXPECT_EQ(one.syncs_with_release, three.syncs_with_release);
    EXPECT_EQ(one.syncs_removed, three.syncs_removed);
    EXPECT_EQ(one.cross_stream_waits, three.cross_stream_waits);
    EXPECT_GT(one.collectives_matched, 0);
  }
  GraphStats s;
  ReplayGraph(t, faster, &s, 3);
  EXPECT_GT(s.syncs_removed, 0);
}

TEST(GraphReplay, FasterMatmulMovesTheRendezvous) {
  GraphModifications mods;
  mods.speed[int(OpClass::kMatmul)] = 2;
  Trace out = ReplayGraph(TwoRanks(), mods);
  // Matmuls take 50 and 100: arrivals at 60 and 110; the transfer (50) after the last.
  const EventTable& d0 = out.ranks[0].tracks[1].events;
  const EventTable& d1 = out.ranks[1].tracks[1].events;
  EXPECT_EQ(d0.dur[0], 50);
  EXPECT_EQ(d1.dur[0], 100);
  EXPECT_EQ(d0.ts[1], 60);
  EXPECT_EQ(d0.End(1), 160);
  EXPECT_EQ(d1.ts[1], 110);
  EXPECT_EQ(d1.End(1), 160);
}

TEST(GraphReplay, SlowerHostDelaysLaunchBoundOps) {
  GraphModifications mods;
  mods.host_factor = 3;
  Trace out = ReplayGraph(TwoRanks(), mods);
  // Launch of the matmul now ends at 30; the matmul starts then.
  EXPECT_EQ(out.ranks[0].tracks[0].events.End(0), 30);
  EXPECT_EQ(out.ranks[0].tracks[1].events.ts[0], 30);
  // The all-reduce launch: gap 10 x3 after 30 -> [60, 90); rank 0's matmul
  // ends at 130, rank 1's at 230: the rendezvous ends at 230 + 50.
  EXPECT_EQ(out.ranks[0].tracks[1].events.End(1), 280);
}

TEST(GraphReplay, RemovedSyncNoLongerWaits) {
  Trace t = TwoRanks();
  Rank& r0 = t.ranks[0];
  // A blocking sync [30, 110) waiting for the matmul (ends 110), then a launch.
  Track& host = r0.tracks[0];
  Event s;
  s.category = Category::kSync;
  s.flags = kFlagBlocking;
  s.name = r0.strings.Intern("aclrtSynchronizeStream (token counts)");
  s.ts = 30; s.dur = 80;
  host.events.Append(s);
  Event l;
  l.category = Category::kLaunch;
  l.name = r0.strings.Intern("launch");
  l.ts = 115; l.dur = 5; l.correlation = 3;
  host.events.Append(l);
  GraphStats stats;
  Trace same = ReplayGraph(t, GraphModifications{}, &stats);
  EXPECT_EQ(same, t);
  EXPECT_EQ(stats.syncs_with_release, 1);
  GraphModifications mods;
  mods.remove_syncs = {"token counts"};
  Trace out = ReplayGraph(t, mods, &stats);
  EXPECT_EQ(stats.syncs_removed, 1);
  EXPECT_EQ(out.ranks[0].tracks[0].events.dur[2], 0);
  EXPECT_EQ(out.ranks[0].tracks[0].events.ts[3], 35);  // 30 + the 5 ns of host work after it
}

// With the task queue on and the dequeue thread behind the Python thread, a
// sync begins before the op it waits for has been dequeued: it still waits
// for it (the queue is drained first), so the op counts as issued at its
// enqueue, not at its dequeue.
TEST(GraphReplay, SyncWaitsForOpsStillInTheTaskQueue) {
  Trace t;
  t.metadata.source = "test";
  Rank rank;
  rank.rank = 0;
  rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python");
  rank.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "dequeue");
  rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 0");
  Event e;
  e.category = Category::kLaunch;
  e.name = rank.strings.Intern("enqueue MatMul");
  // Python: enqueues [0, 10) and [10, 20), then the sync [20, 245).
  e.ts = 0; e.dur = 10; e.correlation = 1;
  rank.tracks[0].events.Append(e);
  e.ts = 10; e.correlation = 2;
  rank.tracks[0].events.Append(e);
  Event s;
  s.category = Category::kSync;
  s.flags = kFlagBlocking;
  s.name = rank.strings.Intern("aclrtSynchronizeStream (token counts)");
  s.ts = 20; s.dur = 225;
  rank.tracks[0].events.Append(s);
  // Dequeue thread, 30 a launch: [10, 40) and [40, 70), both after the sync began.
  e.name = rank.strings.Intern("aclnnMatMul");
  e.ts = 10; e.dur = 30; e.correlation = 1;
  rank.tracks[1].events.Append(e);
  e.ts = 40; e.correlation = 2;
  rank.tracks[1].events.Append(e);
  // Device: [40, 140) and [140, 240); the sync returns 5 after the second.
  Event m;
  m.category = Category::kCompute;
  m.name = rank.strings.Intern("MatMul");
  m.ts = 40; m.dur = 100; m.correlation = 1;
  rank.tracks[2].events.Append(m);
  m.ts = 140; m.correlation = 2;
  rank.tracks[2].events.Append(m);
  t.ranks.push_back(std::move(rank));

  GraphStats stats;
  EXPECT_EQ(ReplayGraph(t, GraphModifications{}, &stats), t);
  EXPECT_EQ(stats.syncs_with_release, 1);
  GraphModifications mods;
  mods.speed[int(OpClass::kMatmul)] = 2;
  Trace out = ReplayGraph(t, mods, &stats);
  // Matmuls [40, 90) and [90, 140); the sync returns at 140 + 5, not after
  // its recorded 225 (245).
  EXPECT_EQ(out.ranks[0].tracks[2].events.End(1), 140);
  EXPECT_EQ(out.ranks[0].tracks[0].events.ts[2], 20);
  EXPECT_EQ(out.ranks[0].tracks[0].events.End(2), 145);
}

TEST(ReplayKeys, SplitsGraphAndConfigKeys) {
  GraphModifications mods;
  auto rest = SplitSets({"speed.fa=1.5", "host.dispatch_factor=0.5", "sync.remove=loss",
                         "host.task_queue=true"},
                        &mods);
  EXPECT_EQ(rest, std::vector<std::string>{"host.task_queue=true"});
  EXPECT_EQ(mods.speed[int(OpClass::kFlashAttention)], 1.5);
  EXPECT_EQ(mods.host_factor, 0.5);
  EXPECT_EQ(mods.remove_syncs, std::vector<std::string>{"loss"});
  SplitSets({"speed.a2a=2"}, &mods);
  EXPECT_EQ(mods.speed[int(OpClass::kAllToAll)], 2);
  EXPECT_EQ(mods.speed[int(OpClass::kComm)], 1);
  EXPECT_THROW(SplitSets({"speed.nope=2"}, &mods), InputError);
  EXPECT_THROW(SplitSets({"speed.matmul=-1"}, &mods), InputError);
  EXPECT_THROW(SplitSets({"host.task_queue"}, &mods), InputError);
}

TEST(ReplayKeys, RecordedTraceTakesOnlyGraphKnobs) {
  // Not modelled by the graph and no tracegen config to regenerate.
  EXPECT_THROW(Replay(TwoRanks(), {"schedule.kind=adaptive"}), InputError);
  ReplayOptions regenerate;
  regenerate.method = ReplayMethod::kRegenerate;
  EXPECT_THROW(Replay(TwoRanks(), {"host.task_queue=true"}, nullptr, regenerate), InputError);
  // A knob the graph models is a transform of the recorded events.
  ReplayResult r = Replay(TwoRanks(), {"host.numa_affinity=true"});
  EXPECT_FALSE(r.regenerated);
  EXPECT_TRUE(r.graph_replayed);
  ASSERT_EQ(r.transforms.size(), 2u);
  EXPECT_EQ(r.transforms[1], "NUMA-local binding");
}

// ---- fidelity --------------------------------------------------------------

TEST(ReplayFidelity, UnmodifiedTinyMoeWithinOnePercent) {
  Trace t = TinyMoe({});
  ReplayResult r = Replay(t, {});
  ASSERT_EQ(r.ranks.size(), 16u);
  for (const RankPrediction& p : r.ranks) {
    ASSERT_GT(p.before_ns, 0);
    EXPECT_LT(RelErr(double(p.after_ns), double(p.before_ns)), 0.01) << "rank " << p.rank;
  }
  EXPECT_GT(r.graph.collectives_matched, 0);
  EXPECT_GT(r.graph.recvs_matched, 0);
  EXPECT_EQ(r.graph.forced, 0);
  fprintf(stderr, "tiny-moe replay: nodes %lld, collectives %lld, recvs %lld, cross-stream %lld\n",
          (long long)r.graph.nodes, (long long)r.graph.collectives_matched,
          (long long)r.graph.recvs_matched, (long long)r.graph.cross_stream_waits);
}

TEST(ReplayFidelity, UnmodifiedKinetoWithinFivePercent) {
  const std::filesystem::path dir = std::filesystem::path(RealTracesRoot()) / "kineto";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no real traces at " << dir;
  int sets = 0;
  for (const char* name : {"a2a-2rank", "b200-eager", "cuda-sync-alexnet", "legacy-resnet50",
                           "ns-resolution", "allreduce-v100"}) {
    const std::filesystem::path p = dir / name;
    if (!std::filesystem::exists(p)) continue;
    Trace t = ReadAll(*OpenTrace(p.string()));
    ReplayResult r = Replay(t, {});
    ASSERT_FALSE(r.ranks.empty()) << name;
    for (const RankPrediction& pr : r.ranks) {
      EXPECT_LT(RelErr(double(pr.after_ns), double(pr.before_ns)), 0.05) << name << " rank " << pr.rank;
      fprintf(stderr, "%s rank %d: step %lld -> %lld ns (forced %lld)\n", name, pr.rank,
              (long long)pr.before_ns, (long long)pr.after_ns, (long long)r.graph.forced);
    }
    ++sets;
  }
  if (sets == 0) GTEST_SKIP() << "no Kineto sets in " << dir;
}

// ---- what-if ---------------------------------------------------------------

// replay(trace of config A, changed to B) against generate(B).
void ExpectWhatIf(const std::vector<std::string>& a, const std::vector<std::string>& change,
                  const std::vector<std::string>& b) {
  Trace ta = TinyMoe(a);
  ReplayResult r = Replay(ta, change);
  const int64_t actual = MedianStep(TinyMoe(b));
  fprintf(stderr, "what-if: before %lld predicted %lld actual %lld\n", (long long)r.step_before_ns,
          (long long)r.step_after_ns, (long long)actual);
  EXPECT_LT(RelErr(double(r.step_after_ns), double(actual)), 0.05)
      << "predicted " << r.step_after_ns << " actual " << actual;
}

TEST(ReplayWhatIf, TaskQueue) {
  ExpectWhatIf({"host.task_queue=false"}, {"host.task_queue=true"}, {"host.task_queue=true"});
}

TEST(ReplayWhatIf, MicroBatch) {
  ExpectWhatIf({}, {"parallel.micro_batch_size=2"}, {"parallel.micro_batch_size=2"});
}

// The graph replay alone (no regeneration): twice the FlashAttention
// efficiency in tracegen against speed.flash_attention=2.
TEST(ReplayWhatIf, GraphSpeedOfFlashAttentionMatchesTracegen) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", {}, 0});
  const auto& hw = c.hardware();
  const std::vector<std::string> faster = {
      "hardware.eff_flash_fwd_opt=" + std::to_string(2 * hw.eff_flash_fwd_opt()),
      "hardware.eff_flash_bwd_opt=" + std::to_string(2 * hw.eff_flash_bwd_opt())};
  Trace base = TinyMoe({});
  ReplayResult r = Replay(base, {"speed.flash_attention=2"});
  EXPECT_FALSE(r.regenerated);
  const int64_t actual = MedianStep(TinyMoe(faster));
  fprintf(stderr, "speed.flash_attention=2: before %lld predicted %lld actual %lld\n",
          (long long)r.step_before_ns, (long long)r.step_after_ns, (long long)actual);
  EXPECT_LT(RelErr(double(r.step_after_ns), double(actual)), 0.05)
      << "predicted " << r.step_after_ns << " actual " << actual << " before " << r.step_before_ns;
}

TEST(ReplayWhatIf, GraphHostFactorMatchesTracegen) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", {"host.task_queue=false"}, 0});
  const auto& hw = c.hardware();
  const std::vector<std::string> slower = {
      "host.task_queue=false",
      "hardware.framework_op_ns=" + std::to_string(2 * hw.framework_op_ns()),
      "hardware.launch_ns=" + std::to_string(2 * hw.launch_ns()),
      "hardware.enqueue_ns=" + std::to_string(2 * hw.enqueue_ns())};
  ReplayResult r = Replay(TinyMoe({"host.task_queue=false"}), {"host.dispatch_factor=2"});
  const int64_t actual = MedianStep(TinyMoe(slower));
  fprintf(stderr, "host.dispatch_factor=2: before %lld predicted %lld actual %lld\n",
          (long long)r.step_before_ns, (long long)r.step_after_ns, (long long)actual);
  EXPECT_LT(RelErr(double(r.step_after_ns), double(actual)), 0.05)
      << "predicted " << r.step_after_ns << " actual " << actual << " before " << r.step_before_ns;
}

}  // namespace
}  // namespace moetrace::replay

namespace moetrace::replay {
namespace {

// Graph replay alone against the tracegen change it stands for.
void ExpectGraphMatches(const std::vector<std::string>& a, const std::vector<std::string>& graph,
                        const std::vector<std::string>& b) {
  ReplayResult r = Replay(TinyMoe(a), graph);
  ASSERT_FALSE(r.regenerated);
  EXPECT_EQ(r.graph.forced, 0);
  const int64_t actual = MedianStep(TinyMoe(b));
  EXPECT_LT(RelErr(double(r.step_after_ns), double(actual)), 0.05)
      << "predicted " << r.step_after_ns << " actual " << actual << " before " << r.step_before_ns;
}

TEST(ReplayWhatIf, FasterAllToAllShortensTheStepOnlyThroughEp) {
  Trace t = TinyMoe({});
  ReplayResult a2a = Replay(t, {"speed.alltoall=2"});
  EXPECT_LT(a2a.step_after_ns, a2a.step_before_ns);
  const auto& ep_before = a2a.before.cluster().comm_by_class().ep();
  const auto& ep_after = a2a.after.cluster().comm_by_class().ep();
  EXPECT_LT(ep_after.total_ns(), ep_before.total_ns());
  // DP/PP collectives keep their transfer time: only waits may change.
  ReplayResult none = Replay(t, {"speed.alltoall=1"});
  EXPECT_EQ(none.step_after_ns, none.step_before_ns);
}

TEST(ReplayWhatIf, GraphSyncRemovalMatchesTracegen) {
  ExpectGraphMatches({"host.sync_before_a2a=true"}, {"sync.remove=token counts"},
                     {"host.sync_before_a2a=false"});
}

TEST(ReplayWhatIf, GraphMatmulSpeedMatchesTracegen) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", {}, 0});
  // tracegen's grouped GEMM efficiency scales with eff_matmul_opt too.
  ExpectGraphMatches({}, {"speed.matmul=1.5", "speed.grouped_matmul=1.5"},
                     {"hardware.eff_matmul_opt=" + std::to_string(1.5 * c.hardware().eff_matmul_opt())});
}

}  // namespace
}  // namespace moetrace::replay

#include "formats/sample_trace.h"

namespace moetrace::replay {
namespace {

// The synthetic sample trace has random times: whatever cycles its fake
// dependencies form, the replay terminates and schedules every event.
TEST(GraphReplay, SyntheticTraceTerminatesAndKeepsEveryEvent) {
  for (uint64_t seed : {1, 2, 3}) {
    Trace t = MakeSampleTrace(4, 64, seed);
    GraphStats stats;
    GraphModifications mods;
    mods.speed[int(OpClass::kMatmul)] = 2;
    mods.host_factor = 0.5;
    Trace out = ReplayGraph(t, mods, &stats);
    ASSERT_EQ(out.ranks.size(), t.ranks.size());
    for (size_t r = 0; r < t.ranks.size(); ++r) {
      for (size_t k = 0; k < t.ranks[r].tracks.size(); ++k) {
        const EventTable& ev = out.ranks[r].tracks[k].events;
        EXPECT_EQ(ev.size(), t.ranks[r].tracks[k].events.size());
        EXPECT_TRUE(ev.IsSortedByTime());
        for (size_t i = 0; i < ev.size(); ++i) EXPECT_GE(ev.dur[i], 0);
      }
    }
    Trace same = ReplayGraph(t, GraphModifications{}, &stats);
    if (stats.forced != 0) continue;
    for (size_t r = 0; r < t.ranks.size(); ++r) {
      for (size_t k = 0; k < t.ranks[r].tracks.size(); ++k) {
        const Track& a = t.ranks[r].tracks[k];
        const Track& b = same.ranks[r].tracks[k];
        for (size_t i = 0; i < a.events.size(); ++i) {
          ASSERT_EQ(a.events.Get(i), b.events.Get(i))
              << "seed " << seed << " rank " << r << " track " << k << " (" << int(a.kind)
              << ") event " << i << " ts " << a.events.ts[i] << " -> " << b.events.ts[i]
              << " dur " << a.events.dur[i] << " -> " << b.events.dur[i];
        }
        ASSERT_EQ(a.sample_ts, b.sample_ts) << "seed " << seed << " counter track " << k;
      }
    }
  }
}

}  // namespace
}  // namespace moetrace::replay

namespace moetrace::replay {
namespace {

// Two ranks issue the same two collectives in opposite orders: a deadlock
// in the graph (inconsistent input). The replay forces its way through.
TEST(GraphReplay, CrossedCollectivesAreForcedNotHung) {
  Trace t;
  for (int r = 0; r < 2; ++r) {
    Rank rank;
    rank.rank = r;
    rank.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "hccl");
    Track& dev = rank.tracks[0];
    const StringId g = rank.strings.Intern("world");
    const StringId name = rank.strings.Intern("HcomAllReduce");
    for (int k = 0; k < 2; ++k) {
      CommRecord c;
      c.kind = CollectiveKind::kAllReduce;
      c.group = g;
      c.group_size = 2;
      c.sequence = r == 0 ? k : 1 - k;
      dev.comms.push_back(c);
      Event e;
      e.category = Category::kCollective;
      e.name = name;
      e.ts = 100 * k;
      e.dur = 50;
      e.comm = k;
      dev.events.Append(e);
    }
    t.ranks.push_back(std::move(rank));
  }
  GraphStats stats;
  Trace out = ReplayGraph(t, GraphModifications{}, &stats);
  EXPECT_EQ(stats.collectives_matched, 2);
  EXPECT_GT(stats.forced, 0);
  for (const Rank& r : out.ranks) {
    const EventTable& ev = r.tracks[0].events;
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_GE(ev.dur[0], 0);
    EXPECT_GE(ev.ts[1], ev.End(0));  // stream order still holds
  }
}

}  // namespace
}  // namespace moetrace::replay
