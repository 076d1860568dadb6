// The RL emitter on a hand-built plan (rl_test_plan.h): phase markers, the
// device work inside them, the actor update equal to the engine's own rank
// shifted, counters, and the native round trip.
#include "tracegen/rl/rl_emit.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/labels.h"
#include "tracegen/rl/rl_test_plan.h"

namespace moetrace::tracegen::rl {
namespace {

using testing::HandPlan;
using testing::kMs;

const Plan& SharedPlan() {
  static const Plan plan = HandPlan();
  return plan;
}

Rank Card(int c) {
  Rank r;
  EmitCard(SharedPlan(), c, &r);
  return r;
}

const Track& TrackNamed(const Rank& r, std::string_view name) {
  for (const Track& t : r.tracks)
    if (r.strings.Get(t.name) == name) return t;
  throw std::runtime_error("no track " + std::string(name));
}

// The phase ranges: markers whose name has a '/' (the engine's step markers
// are "ProfilerStep#N").
std::vector<Event> PhaseMarkers(const Rank& r) {
  std::vector<Event> out;
  const EventTable& ev = TrackNamed(r, "python").events;
  for (size_t i = 0; i < ev.size(); ++i)
    if (ev.category[i] == Category::kMarker && r.strings.Get(ev.name[i]).find('/') != std::string_view::npos)
      out.push_back(ev.Get(i));
  return out;
}

TEST(RlEmit, MarkersNamedAsVerlInPlanOrderWithIterationAsStep) {
  const Plan& plan = SharedPlan();
  for (int c : {0, 3}) {
    Rank r = Card(c);
    std::vector<Event> m = PhaseMarkers(r);
    const auto& phases = plan.card[size_t(c)].phases;
    ASSERT_EQ(m.size(), phases.size()) << "card " << c;
    for (size_t i = 0; i < m.size(); ++i) {
      EXPECT_EQ(m[i].ts, kRlBaseTime + phases[i].start);
      EXPECT_EQ(m[i].dur, phases[i].end - phases[i].start);
      EXPECT_EQ(m[i].step, phases[i].iteration);
      // A step marker would make analyze take the phase for an optimizer step.
      EXPECT_EQ(m[i].flags & kFlagStepMarker, 0) << "card " << c << " phase " << i;
    }
  }
  std::vector<std::string> names;
  Rank r0 = Card(0);
  for (const Event& e : PhaseMarkers(r0)) names.emplace_back(r0.strings.Get(e.name));
  const std::vector<std::string> one = {"rollout/generate_sequences", "actor/compute_log_prob",
                                        "ref/compute_ref_log_prob",   "actor/reshard_to_train",
                                        "actor/update_actor",         "actor/reshard_to_infer"};
  std::vector<std::string> want = one;
  want.insert(want.end(), one.begin(), one.end());
  EXPECT_EQ(names, want);
  Rank r3 = Card(3);
  EXPECT_EQ(r3.strings.Get(PhaseMarkers(r3).back().name), "actor/sync_weights");
}

// Every event and counter sample of every card lies inside one of its phase
// ranges, and the ranges do not overlap: nothing runs outside a phase.
TEST(RlEmit, EveryEventInsideAPhaseAndPhasesDisjoint) {
  for (int c = 0; c < testing::kCards; ++c) {
    Rank r = Card(c);
    std::vector<Event> m = PhaseMarkers(r);
    for (size_t i = 1; i < m.size(); ++i) EXPECT_LE(m[i - 1].ts + m[i - 1].dur, m[i].ts) << "card " << c;
    auto inside = [&](TimeNs a, TimeNs b) {
      for (const Event& p : m)
        if (a >= p.ts && b <= p.ts + p.dur) return true;
      return false;
    };
    size_t checked = 0;
    for (const Track& t : r.tracks) {
      EXPECT_TRUE(t.events.IsSortedByTime()) << r.strings.Get(t.name);
      for (size_t i = 0; i < t.events.size(); ++i, ++checked)
        EXPECT_TRUE(inside(t.events.ts[i], t.events.End(i)))
            << "card " << c << " " << r.strings.Get(t.name) << " " << r.strings.Get(t.events.name[i]) << " at "
            << t.events.ts[i];
      for (TimeNs ts : t.sample_ts) EXPECT_TRUE(inside(ts, ts)) << "card " << c << " " << r.strings.Get(t.name);
    }
    // The RL launches on the main thread do not overlap (the two of a
    // switch, at its start on two streams, coincide exactly).
    const EventTable& py = TrackNamed(r, "python").events;
    TimeNs prev_ts = -1, prev_end = -1;
    for (size_t i = 0; i < py.size(); ++i) {
      if (r.strings.Get(py.name[i]) != "launch") continue;
      EXPECT_TRUE(py.ts[i] >= prev_end || (py.ts[i] == prev_ts && py.End(i) == prev_end)) << "card " << c << " at " << py.ts[i];
      prev_ts = py.ts[i];
      prev_end = py.End(i);
    }
    if (c == 3) {
      // Rollout only, per iteration: 4 markers; rollout 6 graphs + 5
      // all-to-alls + 11 launches; 2 scorings of 4 layers + 1 all-to-all +
      // 5 launches; the weight broadcast and its launch.
      EXPECT_EQ(checked, size_t(2 * (4 + 22 + 2 * 10 + 2)));
    } else {
      EXPECT_GT(checked, 1000u);  // with two actor updates
    }
  }
}

// update_actor is the engine's own rank, shifted to the span's start, in
// both iterations, with the steps renumbered iteration * 2 + step.
TEST(RlEmit, UpdateActorIsTheEngineRankShifted) {
  const Plan& plan = SharedPlan();
  Rank card = Card(1);
  Rank eng = plan.train_engine->EmitRank(1);
  std::vector<const PhaseSpan*> updates;
  for (const PhaseSpan& p : plan.card[1].phases)
    if (p.task == Task::kUpdateActor) updates.push_back(&p);
  ASSERT_EQ(updates.size(), 2u);
  for (size_t t = 0; t < eng.tracks.size(); ++t) {
    const EventTable& want = eng.tracks[t].events;
    const EventTable& got = card.tracks[t].events;
    ASSERT_EQ(card.strings.Get(card.tracks[t].name), eng.strings.Get(eng.tracks[t].name));
    for (int it = 0; it < 2; ++it) {
      const TimeNs lo = kRlBaseTime + updates[size_t(it)]->start, hi = kRlBaseTime + updates[size_t(it)]->end;
      std::vector<Event> in;
      for (size_t i = 0; i < got.size(); ++i) {
        // Only the engine's events: not the RL marker of the range itself.
        if (got.ts[i] >= lo && got.End(i) <= hi &&
            card.strings.Get(got.name[i]).find('/') == std::string_view::npos)
          in.push_back(got.Get(i));
      }
      ASSERT_EQ(in.size(), want.size()) << "track " << t << " iteration " << it;
      for (size_t i = 0; i < want.size(); ++i) {
        const Event w = want.Get(i);
        EXPECT_EQ(in[i].ts, w.ts + updates[size_t(it)]->start);
        EXPECT_EQ(in[i].dur, w.dur);
        EXPECT_EQ(in[i].category, w.category);
        EXPECT_EQ(in[i].flops, w.flops);
        EXPECT_EQ(in[i].bytes, w.bytes);
        EXPECT_EQ(in[i].step, w.step < 0 ? w.step : it * testing::kUpdateSteps + w.step);
        if (!(w.flags & kFlagStepMarker)) EXPECT_EQ(card.strings.Get(in[i].name), eng.strings.Get(w.name));
        else EXPECT_EQ(card.strings.Get(in[i].name), "ProfilerStep#" + std::to_string(in[i].step));
        if (w.comm >= 0) {
          const CommRecord& a = card.tracks[t].comms[size_t(in[i].comm)];
          const CommRecord& b = eng.tracks[t].comms[size_t(w.comm)];
          EXPECT_EQ(a.sequence, b.sequence + it * kIterationSequenceStride);
          EXPECT_EQ(a.bytes, b.bytes);
          EXPECT_EQ(card.strings.Get(a.group), eng.strings.Get(b.group));
          auto ar = card.tracks[t].Ranks(a.group_ranks);
          auto br = eng.tracks[t].Ranks(b.group_ranks);
          EXPECT_TRUE(std::equal(ar.begin(), ar.end(), br.begin(), br.end()));
        }
      }
    }
  }
  EXPECT_EQ(card.routing.size(), 2 * eng.routing.size());
  // Correlation ids stay unique over the whole card.
  std::vector<int64_t> device;
  for (const Track& t : card.tracks)
    if (t.kind == TrackKind::kDeviceStream)
      for (int64_t c : t.events.correlation)
        if (c >= 0) device.push_back(c);
  std::sort(device.begin(), device.end());
  EXPECT_EQ(std::adjacent_find(device.begin(), device.end()), device.end());
}

TEST(RlEmit, RolloutStepsAreGraphsWithTheirAllToAllAndCounters) {
  const Plan& plan = SharedPlan();
  Rank r = Card(2);  // instance 1: prefill + 5 decode steps per iteration
  const EventTable& comp = TrackNamed(r, "stream 0 (compute)").events;
  int decode = 0, prefill = 0;
  uint64_t decode_flops = 0;
  for (size_t i = 0; i < comp.size(); ++i) {
    std::string_view n = r.strings.Get(comp.name[i]);
    if (n == "DecodeGraph") ++decode, decode_flops += comp.flops[i];
    if (n == "PrefillChunk") ++prefill;
  }
  EXPECT_EQ(decode, 10);
  EXPECT_EQ(prefill, 2);
  // 7e6 + d for d = 0..4, twice.
  EXPECT_EQ(decode_flops, 2 * (5 * 7'000'000ull + 10));
  const Track& hccl = TrackNamed(r, "stream 1 (hccl)");
  int a2a = 0;
  uint64_t a2a_bytes = 0;
  for (size_t i = 0; i < hccl.events.size(); ++i) {
    const CommRecord& c = hccl.comms[size_t(hccl.events.comm[i])];
    if (r.strings.Get(c.group) != "rl/rollout/instance1") continue;
    ++a2a;
    a2a_bytes += c.bytes;
    EXPECT_EQ(c.kind, CollectiveKind::kAllToAll);
    EXPECT_EQ(c.comm_class, CommClass::kEP);
    EXPECT_EQ(hccl.events.dur[i], kMs / 5);
    auto g = hccl.Ranks(c.group_ranks);
    EXPECT_EQ(std::vector<int32_t>(g.begin(), g.end()), (std::vector<int32_t>{2, 3}));
  }
  EXPECT_EQ(a2a, 10);
  // Each step's comm_bytes (65536 + d, d = 0..4), twice.
  EXPECT_EQ(a2a_bytes, 2 * (5 * 65'536ull + 10));
  // generated_tokens: cumulative decode tokens, never decreasing, ending at
  // the instance's total over both iterations.
  const Track& gen = TrackNamed(r, "generated_tokens");
  ASSERT_EQ(gen.sample_value.size(), 12u);
  EXPECT_TRUE(std::is_sorted(gen.sample_value.begin(), gen.sample_value.end()));
  EXPECT_EQ(gen.sample_value.back(),
            double(plan.instances[1].iterations[0].generated_tokens + plan.instances[1].iterations[1].generated_tokens));
  EXPECT_EQ(gen.sample_value.back(), 40.0);
  // kv_cache: the step's kv_bytes when it ends, freed when the range ends.
  const Track& kv = TrackNamed(r, "kv_cache");
  const TimeNs end0 = kRlBaseTime + plan.instances[1].iterations[0].end;
  std::vector<double> first;
  for (size_t i = 0; i < kv.sample_ts.size(); ++i)
    if (kv.sample_ts[i] <= end0) first.push_back(kv.sample_value[i]);
  // The last decode step ends with the range: its sample is replaced by 0.
  EXPECT_EQ(first, (std::vector<double>{1'000'000, 1'010'000, 1'020'000, 1'030'000, 1'040'000, 0}));
}

// The switch: all-gather of the weights over the colocated cards, the
// optimizer states offloaded then reloaded, memory.optimizer and
// memory.allocated stepping when the copies end.
TEST(RlEmit, ReshardMovesOptimizerStates) {
  const Plan& plan = SharedPlan();
  Rank r = Card(0);
  const Track& copy = TrackNamed(r, "stream 4 (copy/swap)");
  std::vector<std::string> names;
  for (size_t i = 0; i < copy.events.size(); ++i)
    if (copy.events.category[i] == Category::kCopy &&
        r.strings.Get(copy.events.name[i]).rfind("optimizer_", 0) == 0)
      names.emplace_back(r.strings.Get(copy.events.name[i]));
  EXPECT_EQ(names, (std::vector<std::string>{"optimizer_reload", "optimizer_offload", "optimizer_reload",
                                             "optimizer_offload"}));
  const Track& hccl = TrackNamed(r, "stream 1 (hccl)");
  int gathers = 0;
  for (const CommRecord& c : hccl.comms)
    if (c.kind == CollectiveKind::kAllGather && r.strings.Get(c.group) == "rl/reshard_to_infer") {
      ++gathers;
      EXPECT_EQ(c.bytes, testing::kReshardBytes);
      auto g = hccl.Ranks(c.group_ranks);
      EXPECT_EQ(std::vector<int32_t>(g.begin(), g.end()), (std::vector<int32_t>{0, 1, 2}));
    }
  EXPECT_EQ(gathers, 2);
  // The first offload moves the level the card holds (the engine's last
  // sample, not the plan's copy_bytes) and leaves none; allocated drops by
  // the same amount (the weights changed earlier, when the all-gather ended).
  TimeNs offload_end = 0;
  for (const PhaseSpan& p : plan.card[0].phases)
    if (p.task == Task::kReshardToInfer && p.iteration == 0) offload_end = kRlBaseTime + p.start + p.copy_dur;
  const Track& opt = TrackNamed(r, "memory.optimizer");
  const Track& alloc = TrackNamed(r, "memory.allocated");
  auto at = [](const Track& t, TimeNs ts) {
    double v = 0;
    for (size_t i = 0; i < t.sample_ts.size() && t.sample_ts[i] <= ts; ++i) v = t.sample_value[i];
    return v;
  };
  const double before = at(opt, offload_end - 1);
  ASSERT_GT(before, 0);
  EXPECT_EQ(at(opt, offload_end), 0.0);
  EXPECT_EQ(at(alloc, offload_end - 1) - at(alloc, offload_end), before);
  for (size_t i = 0; i < copy.events.size(); ++i)
    if (r.strings.Get(copy.events.name[i]) == "optimizer_offload" && copy.events.End(i) == offload_end)
      EXPECT_EQ(double(copy.events.bytes[i]), before);
  // allocated is the sum of the categories at every sample.
  for (size_t i = 0; i < alloc.sample_ts.size(); ++i) {
    double sum = 0;
    for (const char* n : {"memory.weights", "memory.gradients", "memory.optimizer", "memory.activations",
                          "memory.recompute", "kv_cache"})
      sum += at(TrackNamed(r, n), alloc.sample_ts[i]);
    EXPECT_EQ(alloc.sample_value[i], sum) << "at " << alloc.sample_ts[i];
  }
}

TEST(RlEmit, ScoringSplitPerLayerKeepsTheSpanFlops) {
  const Plan& plan = SharedPlan();
  Rank r = Card(3);
  const EventTable& comp = TrackNamed(r, "stream 0 (compute)").events;
  uint64_t flops = 0, bytes = 0;
  int layers = 0;
  TimeNs lo = 0, hi = 0;  // iteration 1's range
  for (const PhaseSpan& p : plan.card[3].phases)
    if (p.task == Task::kComputeRefLogProb && p.iteration == 1) lo = kRlBaseTime + p.start, hi = kRlBaseTime + p.end;
  for (size_t i = 0; i < comp.size(); ++i)
    if (comp.ts[i] >= lo && comp.End(i) <= hi && r.strings.Get(comp.name[i]) == "compute_ref_log_prob.layer") {
      EXPECT_EQ(comp.step[i], kNone);
      flops += comp.flops[i];
      bytes += comp.bytes[i];
      EXPECT_EQ(comp.layer[i], layers++);
    }
  EXPECT_EQ(layers, plan.config.model().num_layers());
  EXPECT_EQ(flops, testing::kScoreFlops);
  EXPECT_EQ(bytes, testing::kScoreBytes);
}

TEST(RlEmit, CardOutsideThePlanThrows) {
  Rank r;
  EXPECT_THROW(EmitCard(SharedPlan(), 4, &r), std::out_of_range);
}

TEST(RlEmit, CardsRoundTripThroughTheNativeFormat) {
  const std::string path = ::testing::TempDir() + "rl_emit_roundtrip_" + std::to_string(::getpid()) + ".mtrace";
  std::vector<Rank> cards;
  {
    auto sink = CreateNativeSink(path);
    for (int c = 0; c < testing::kCards; ++c) {
      cards.push_back(Card(c));
      sink->AddRank(cards.back());
    }
    sink->Finish(Metadata());
  }
  auto src = OpenNative(path);
  ASSERT_EQ(src->rank_count(), size_t(testing::kCards));
  for (size_t i = 0; i < cards.size(); ++i) EXPECT_TRUE(src->ReadRank(i) == cards[i]) << "card " << i;
}

}  // namespace
}  // namespace moetrace::tracegen::rl

namespace moetrace::tracegen::rl {
namespace {

// What BuildPlan may rely on: an update_actor range of the engine's
// RankEndTimes()[train_rank] holds every event and sample of that rank (the
// hand plan adds 1 ms; this pins that it need not).
TEST(RlEmit, EngineRankEndsByItsRankEndTime) {
  const Plan& plan = SharedPlan();
  const std::vector<int64_t> ends = plan.train_engine->RankEndTimes();
  for (int r = 0; r < 3; ++r) {
    Rank k = plan.train_engine->EmitRank(r);
    TimeNs last = 0, first = INT64_MAX;
    for (const Track& t : k.tracks) {
      for (size_t i = 0; i < t.events.size(); ++i) last = std::max(last, t.events.End(i)), first = std::min(first, t.events.ts[i]);
      for (TimeNs ts : t.sample_ts) last = std::max(last, ts), first = std::min(first, ts);
    }
    EXPECT_EQ(first, kRlBaseTime) << "rank " << r;
    EXPECT_LE(last - kRlBaseTime, ends[size_t(r)]) << "rank " << r;
  }
}

}  // namespace
}  // namespace moetrace::tracegen::rl

namespace moetrace::tracegen::rl {
namespace {

TEST(RlEmit, WorkOutsideItsPhaseIsCounted) {
  for (int c = 0; c < testing::kCards; ++c) EXPECT_TRUE(Card(c).import_stats.empty()) << "card " << c;
  // Card 1's first update_actor range cut 1 ns before the engine's last
  // event or sample ends: exactly those that end later are counted.
  Plan plan = SharedPlan();
  Rank eng = plan.train_engine->EmitRank(1);
  TimeNs last = 0;
  for (const Track& t : eng.tracks) {
    for (size_t i = 0; i < t.events.size(); ++i) last = std::max(last, t.events.End(i));
    for (TimeNs ts : t.sample_ts) last = std::max(last, ts);
  }
  int64_t want = 0;
  for (const Track& t : eng.tracks) {
    for (size_t i = 0; i < t.events.size(); ++i) want += t.events.End(i) == last;
    for (TimeNs ts : t.sample_ts) want += ts == last;
  }
  ASSERT_GT(want, 0);
  for (PhaseSpan& p : plan.card[1].phases)
    if (p.task == Task::kUpdateActor && p.iteration == 0) p.end = p.start + (last - kRlBaseTime) - 1;
  Rank r;
  EmitCard(plan, 1, &r);
  ASSERT_EQ(r.import_stats.size(), 1u);
  EXPECT_EQ(r.import_stats[0].first, "tracegen.rl.outside_phase");
  EXPECT_EQ(r.import_stats[0].second, want);
}

// PPO: the critic is trained like the actor (README). BuildPlan gives its
// update the actor update's model FLOPs; a plan without figures for it gets
// the compute of the card's actor update, split per layer.
TEST(RlEmit, UpdateCriticWithoutPlanFiguresCarriesTheTrainingEnginesCompute) {
  Plan plan = BuildPlan(BuildConfig({"tiny-rl", "", {"rl.algorithm=ppo", "rl.iterations=1"}, 0}));
  for (CardPlan& c : plan.card)
    for (PhaseSpan& p : c.phases)
      if (p.task == Task::kUpdateCritic) p.flops = p.bytes = 0;
  Rank card;
  EmitCard(plan, 0, &card);
  const Rank eng = plan.train_engine->EmitRank(0);
  uint64_t want_flops = 0, want_bytes = 0;
  for (const Track& t : eng.tracks)
    for (size_t i = 0; i < t.events.size(); ++i)
      if (t.events.category[i] == Category::kCompute) {
        want_flops += t.events.flops[i];
        want_bytes += t.events.bytes[i];
      }
  ASSERT_GT(want_flops, 0u);
  const EventTable& comp = TrackNamed(card, "stream 0 (compute)").events;
  uint64_t flops = 0, bytes = 0;
  int layers = 0;
  for (size_t i = 0; i < comp.size(); ++i)
    if (card.strings.Get(comp.name[i]) == "update_critic.layer") {
      flops += comp.flops[i];
      bytes += comp.bytes[i];
      EXPECT_EQ(comp.layer[i], layers++);
      EXPECT_EQ(comp.phase[i], Phase::kBackward);
    }
  EXPECT_EQ(layers, 4);
  EXPECT_EQ(flops, want_flops);
  EXPECT_EQ(bytes, want_bytes);
}

// A rollout with tp 2: each step's TP all-reduce (the card's attention-DP
// group, class TP) then its EP all-to-all (the instance), lasting the
// step's tp_comm_dur and comm_dur - tp_comm_dur.
TEST(RlEmit, RolloutTpAllReduceApartFromEpAllToAll) {
  const Plan plan = BuildPlan(BuildConfig(
      {"tiny-rl", "", {"rl.rollout.tp=2", "rl.rollout.dp=2", "rl.iterations=1"}, 0}));
  const InstanceIteration& it = plan.instances[0].iterations[0];
  Rank card;
  EmitCard(plan, 1, &card);
  const Track& hccl = TrackNamed(card, "stream 1 (hccl)");
  std::vector<TimeNs> tp, ep;
  for (size_t i = 0; i < hccl.events.size(); ++i) {
    const CommRecord& c = hccl.comms[size_t(hccl.events.comm[i])];
    const std::string_view g = card.strings.Get(c.group);
    auto ranks = hccl.Ranks(c.group_ranks);
    if (g == "rl/rollout/instance0/tp0") {
      EXPECT_EQ(c.kind, CollectiveKind::kAllReduce);
      EXPECT_EQ(c.comm_class, CommClass::kTP);
      EXPECT_EQ(std::vector<int32_t>(ranks.begin(), ranks.end()), (std::vector<int32_t>{0, 1}));
      tp.push_back(hccl.events.dur[i]);
    } else if (g == "rl/rollout/instance0") {
      EXPECT_EQ(c.kind, CollectiveKind::kAllToAll);
      EXPECT_EQ(c.comm_class, CommClass::kEP);
      EXPECT_EQ(ranks.size(), 4u);
      ep.push_back(hccl.events.dur[i]);
    }
  }
  std::vector<TimeNs> want_tp, want_ep;
  for (const RolloutStep& st : it.steps) {
    EXPECT_GT(st.tp_comm_dur, 0);
    want_tp.push_back(st.tp_comm_dur);
    want_ep.push_back(st.comm_dur - st.tp_comm_dur);
  }
  EXPECT_EQ(tp, want_tp);
  EXPECT_EQ(ep, want_ep);
}

}  // namespace
}  // namespace moetrace::tracegen::rl

namespace moetrace::tracegen::rl {
namespace {

// Separate pools: a rollout-only card holds the inference layout's weights
// from its first phase on (tiny-rl's instance of dp 4 x ep 4: 205,881,344
// bytes, inference_cost_test works them out), so memory.allocated =
// weights + the step's KV cache and the peak is weights + the largest KV.
TEST(RlEmit, RolloutOnlyCardHoldsTheInferenceWeights) {
  const Plan plan = BuildPlan(BuildConfig({"tiny-rl", "", {"rl.placement=separate", "rl.rollout.cards=8"}, 0}));
  ASSERT_EQ(plan.cards, 24);
  EXPECT_EQ(plan.infer_weight_bytes, 205881344);
  Rank r;
  EmitCard(plan, 20, &r);  // the rollout pool is cards 16-23
  const Track& w = TrackNamed(r, "memory.weights");
  ASSERT_EQ(w.sample_value.size(), 1u);
  EXPECT_EQ(w.sample_value[0], 205881344.0);
  EXPECT_EQ(w.sample_ts[0], kRlBaseTime + plan.card[20].phases.front().start);
  const Track& kv = TrackNamed(r, "kv_cache");
  const Track& alloc = TrackNamed(r, "memory.allocated");
  const double kv_max = *std::max_element(kv.sample_value.begin(), kv.sample_value.end());
  const double peak = *std::max_element(alloc.sample_value.begin(), alloc.sample_value.end());
  EXPECT_GT(kv_max, 0);
  EXPECT_EQ(peak, 205881344.0 + kv_max);
  EXPECT_EQ(FindMemoryPeak(r).peak, peak);
  // A training card's weights are the engine's, not the inference layout's.
  Rank t;
  EmitCard(plan, 0, &t);
  const Track& tw = TrackNamed(t, "memory.weights");
  ASSERT_FALSE(tw.sample_value.empty());
  EXPECT_NE(tw.sample_value[0], 205881344.0);
}

// Colocated tiny-rl, card 0 (rollout instance 0, train rank 0): memory
// follows the layout. In every rollout the card holds the inference
// weights (205,881,344 B, as a rollout-only card) and its KV cache, nothing
// of training; reshard_to_infer frees the gradients and activations and
// offloads the whole optimizer level the engine left; reshard_to_train
// restores the training weights and the optimizer level the engine's rank
// starts from, so the engine's own samples continue without a step.
TEST(RlEmit, ColocatedCardSwitchesMemoryWithTheLayout) {
  const Plan plan = BuildPlan(BuildConfig({"tiny-rl", "", {}, 0}));
  Rank r;
  EmitCard(plan, 0, &r);
  auto at = [](const Track& t, TimeNs ts) {
    double v = 0;
    for (size_t i = 0; i < t.sample_ts.size() && t.sample_ts[i] <= ts; ++i) v = t.sample_value[i];
    return v;
  };
  const char* names[] = {"memory.weights", "memory.gradients", "memory.optimizer", "memory.activations",
                         "memory.recompute", "kv_cache", "memory.allocated"};
  auto levels = [&](TimeNs ts) {
    std::vector<double> v;
    for (const char* n : names) v.push_back(at(TrackNamed(r, n), ts));
    return v;
  };
  using L = std::vector<double>;  // weights, gradients, optimizer, activations, recompute, kv, allocated
  const double infer = 205881344, train_w = 97419264, grads = 194838528, opt = 106094592;
  const L rollout = {infer, 0, 0, 0, 0, 0, infer};
  const L trained = {train_w, grads, opt, 0, 0, 0, train_w + grads + opt};  // the engine's first and last samples
  const L reloaded = {train_w, 0, opt, 0, 0, 0, train_w + opt};
  const Track& alloc = TrackNamed(r, "memory.allocated");
  const Track& kv = TrackNamed(r, "kv_cache");
  int rollouts = 0, to_train = 0, to_infer = 0, updates = 0;
  for (const PhaseSpan& p : plan.card[0].phases) {
    const TimeNs a = kRlBaseTime + p.start, b = kRlBaseTime + p.end;
    if (p.task == Task::kGenerateSequences) {
      ++rollouts;
      // Nothing before the first rollout; the offload ends with the previous range.
      EXPECT_EQ(levels(a - 1), p.iteration == 0 ? L(7, 0.0) : (L{infer, 0, opt, 0, 0, 0, infer + opt}));
      EXPECT_EQ(levels(a), rollout);
      EXPECT_EQ(levels(b), rollout);  // the KV cache freed at the range's end
      for (size_t i = 0; i < alloc.sample_ts.size(); ++i)
        if (alloc.sample_ts[i] >= a && alloc.sample_ts[i] <= b)
          EXPECT_EQ(alloc.sample_value[i], infer + at(kv, alloc.sample_ts[i])) << "at " << alloc.sample_ts[i];
    } else if (p.task == Task::kReshardToTrain) {
      ++to_train;
      EXPECT_EQ(levels(a - 1), rollout);
      EXPECT_EQ(levels(b), reloaded);
    } else if (p.task == Task::kUpdateActor) {
      ++updates;
      // The engine's samples continue from the reloaded levels (its
      // gradients appear with its first sample).
      EXPECT_EQ(levels(a - 1), reloaded);
      EXPECT_EQ(levels(a), trained);
    } else if (p.task == Task::kReshardToInfer) {
      ++to_infer;
      EXPECT_EQ(levels(a - 1), trained);
      EXPECT_EQ(levels(b), rollout);
    }
  }
  EXPECT_EQ(rollouts, 2);
  EXPECT_EQ(to_train, 2);
  EXPECT_EQ(updates, 2);
  EXPECT_EQ(to_infer, 2);
  // The copies move the optimizer level the card holds, not the plan's
  // 12 B/param (switch_cost.cc).
  const Track& copy = TrackNamed(r, "stream 4 (copy/swap)");
  std::vector<uint64_t> moved;
  for (size_t i = 0; i < copy.events.size(); ++i)
    if (r.strings.Get(copy.events.name[i]).rfind("optimizer_", 0) == 0) moved.push_back(copy.events.bytes[i]);
  EXPECT_EQ(moved, (std::vector<uint64_t>(4, 106094592)));
  // The peak: max(training peak, inference weights + the largest KV cache).
  const double kv_max = *std::max_element(kv.sample_value.begin(), kv.sample_value.end());
  EXPECT_EQ(kv_max, 870400.0);
  double train_peak = 0;
  for (const PhaseSpan& p : plan.card[0].phases)
    if (p.task == Task::kUpdateActor)
      for (size_t i = 0; i < alloc.sample_ts.size(); ++i)
        if (alloc.sample_ts[i] >= kRlBaseTime + p.start && alloc.sample_ts[i] <= kRlBaseTime + p.end)
          train_peak = std::max(train_peak, alloc.sample_value[i]);
  EXPECT_EQ(train_peak, 486889760.0);
  EXPECT_EQ(FindMemoryPeak(r).peak, std::max(train_peak, infer + kv_max));
}

// PPO: the critic's update is compute over its range (its span's FLOPs,
// split per layer as scoring's), not an empty range.
TEST(RlEmit, CriticUpdateComputesItsSpanFlops) {
  const Plan plan = BuildPlan(BuildConfig({"tiny-rl", "", {"rl.algorithm=ppo", "rl.iterations=1"}, 0}));
  const PhaseSpan* critic = nullptr;
  for (const PhaseSpan& p : plan.card[3].phases)
    if (p.task == Task::kUpdateCritic) critic = &p;
  ASSERT_NE(critic, nullptr);
  Rank r;
  EmitCard(plan, 3, &r);
  const EventTable& comp = TrackNamed(r, "stream 0 (compute)").events;
  uint64_t flops = 0;
  int layers = 0;
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = 0;
  for (size_t i = 0; i < comp.size(); ++i) {
    if (r.strings.Get(comp.name[i]) != "update_critic.layer") continue;
    flops += comp.flops[i];
    ++layers;
    first = std::min(first, comp.ts[i]);
    last = std::max(last, comp.End(i));
  }
  EXPECT_EQ(layers, 4);  // tiny-moe's 4 layers
  EXPECT_EQ(flops, critic->flops);
  EXPECT_EQ(flops, 356485920768u);
  EXPECT_EQ(first, kRlBaseTime + critic->start);
  EXPECT_EQ(last, kRlBaseTime + critic->end);
}

}  // namespace
}  // namespace moetrace::tracegen::rl
