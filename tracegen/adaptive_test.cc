// Adaptive Pipe's mechanisms, each on a small config with exact values: the
// hierarchical all-to-all run as its two steps (each a collective over the
// members that step connects, so it waits only for them), the weight
// gradients off the backward chain, the chunks with no opposite-direction
// partner cut in two halves that overlap each other, and half of DualPipe's
// weight memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "tracegen/simulate_for_test.h"
#include "tracegen/schedule.h"

namespace moetrace::tracegen {
namespace {

struct Instance {
  std::vector<TimeNs> start, end;
  TimeNs min_dur = -1;
  int group_size = 0, ranks = 0, layer = -1;
};

// Every instance of the collective `name` by (group, sequence), with its
// members' start and end times, the shortest member duration and the layer.
std::map<std::pair<std::string, int64_t>, Instance> Instances(const Trace& t, const std::string& name) {
  std::map<std::pair<std::string, int64_t>, Instance> out;
  for (const Rank& r : t.ranks)
    for (const Track& tr : r.tracks)
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.comm[i] < 0 || r.strings.Get(tr.events.name[i]) != name) continue;
        const CommRecord& c = tr.comms[tr.events.comm[i]];
        Instance& in = out[{std::string(r.strings.Get(c.group)), c.sequence}];
        in.start.push_back(tr.events.ts[i]);
        in.end.push_back(tr.events.End(i));
        TimeNs d = tr.events.dur[i];
        in.min_dur = in.min_dur < 0 ? d : std::min(in.min_dur, d);
        in.group_size = c.group_size;
        in.layer = tr.events.layer[i];
        in.ranks = int(c.group_ranks.size);
      }
  return out;
}

// EP 16 over two 8-NPU nodes, strongly skewed routing, one micro-batch per
// rank, hierarchical all-to-all, no latency terms (so that two halves of a
// step add up to the whole exactly). With PP 1 the adaptive schedule pairs
// each micro-batch's forward with its own backward: both run as halves.
std::vector<std::string> TwoNodes(const char* kind) {
  return {"routing.skew=2.5", "routing.drift=0", "parallel.pp=1", "parallel.dp=16", "parallel.ep=16",
          "parallel.global_batch_size=16", "comm.a2a=hierarchical", "host.task_queue=false", "steps=1",
          "hardware.alpha_intra_ns=0", "hardware.alpha_inter_ns=0", std::string("schedule.kind=") + kind};
}

TEST(Adaptive, HierarchicalAllToAllRunsAsItsTwoSteps) {
  Trace flat = SimulateTinyMoe(TwoNodes("1f1b")), ad = SimulateTinyMoe(TwoNodes("adaptive_pipe"));
  EXPECT_TRUE(Instances(ad, "HcomAllToAllV_dispatch").empty());
  auto whole = Instances(flat, "HcomAllToAllV_dispatch");
  auto inter = Instances(ad, "HcomAllToAllV_dispatch_inter");
  auto intra = Instances(ad, "HcomAllToAllV_dispatch_intra");
  // 3 MoE layers, one micro-batch in two halves: per layer one dispatch
  // over 16 ranks before; now per half its inter-node step as 8 collectives
  // of 2 (one rank per node at each node position) and its intra-node step
  // as 2 collectives of 8 (one per node).
  ASSERT_EQ(whole.size(), 3u);
  ASSERT_EQ(inter.size(), 3u * 2 * 8);
  ASSERT_EQ(intra.size(), 3u * 2 * 2);
  for (auto& [k, in] : inter) {
    EXPECT_EQ(in.group_size, 2) << k.first;
    EXPECT_EQ(in.ranks, 2) << k.first;
    EXPECT_EQ(in.start.size(), 2u);
  }
  for (auto& [k, in] : intra) {
    EXPECT_EQ(in.group_size, 8) << k.first;
    EXPECT_EQ(in.start.size(), 8u);
  }
  // The whole all-to-all took its slowest member's inter-node step plus its
  // slowest member's intra-node step. Each step now takes what its own
  // members need (the last member to arrive runs the bare duration); the
  // two halves of a step add up to it (each rounds down to the ns).
  std::map<int, TimeNs> w;
  std::map<int, std::map<std::string, TimeNs>> i1, i2;  // layer -> group -> both halves
  for (auto& [k, in] : whole) w[in.layer] = in.min_dur;
  for (auto& [k, in] : inter) i1[in.layer][k.first] += in.min_dur;
  for (auto& [k, in] : intra) i2[in.layer][k.first] += in.min_dur;
  ASSERT_EQ(w.size(), 3u);
  int shorter = 0;
  for (auto& [l, d] : w) {
    TimeNs a = 0, b = 0;
    for (auto& [g, v] : i1[l]) a = std::max(a, v);
    for (auto& [g, v] : i2[l]) b = std::max(b, v);
    EXPECT_NEAR(double(a + b), double(d), 2.0) << "layer " << l;
    for (auto& [g, v] : i2[l])
      if (v < b) ++shorter;
  }
  // Skewed routing: one node's redistribution needs less than the other's.
  // (The inter-node step's bytes are expected de-duplicated copies per
  // destination node, the same at every node position of two nodes.)
  EXPECT_EQ(shorter, 3);
}

TEST(Adaptive, EachStepWaitsOnlyForItsOwnMembers) {
  Trace ad = SimulateTinyMoe(TwoNodes("adaptive_pipe"));
  int differ = 0;
  for (const char* name : {"HcomAllToAllV_dispatch_inter", "HcomAllToAllV_dispatch_intra",
                           "HcomAllToAllV_combine_intra", "HcomAllToAllV_combine_inter"}) {
    auto all = Instances(ad, name);
    ASSERT_FALSE(all.empty()) << name;
    std::map<int64_t, std::vector<TimeNs>> ends_by_seq;
    for (auto& [k, in] : all) {
      // A collective starts when its last member arrives: every member ends
      // at that arrival plus the step's duration, whatever the others do.
      TimeNs last = *std::max_element(in.start.begin(), in.start.end());
      for (TimeNs e : in.end) EXPECT_EQ(e, last + in.min_dur) << name << " " << k.first;
      ends_by_seq[k.second].push_back(in.end[0]);
    }
    for (auto& [seq, ends] : ends_by_seq)
      if (*std::max_element(ends.begin(), ends.end()) != *std::min_element(ends.begin(), ends.end())) ++differ;
  }
  // With skewed routing the sub-groups of one all-to-all finish apart: no
  // step waits for the most loaded rank of another node or position.
  EXPECT_GT(differ, 0);
}

// Forward compute events of micro-batch `mb` on rank `rank`: count, FLOPs,
// last end; and the start of that micro-batch's p2p send.
std::tuple<int, uint64_t, TimeNs, TimeNs> Forward(const Trace& t, int rank, int mb) {
  int n = 0;
  uint64_t flops = 0;
  TimeNs end = 0, send = -1;
  for (const Rank& r : t.ranks) {
    if (r.rank != rank) continue;
    for (const Track& tr : r.tracks)
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.micro_batch[i] != mb || tr.events.phase[i] != Phase::kForward) continue;
        if (tr.events.category[i] == Category::kCompute) {
          ++n;
          flops += tr.events.flops[i];
          end = std::max(end, tr.events.End(i));
        } else if (tr.events.category[i] == Category::kP2P && r.strings.Get(tr.events.name[i]) == "HcomSend") {
          send = tr.events.ts[i];
        }
      }
  }
  return {n, flops, end, send};
}

TEST(Adaptive, UnpairedChunkRunsAsTwoOverlappingHalves) {
  // PP 2, one micro-batch per rank in flight at warmup: stage 0's forward of
  // micro-batch 0 has no backward to pair with.
  std::vector<std::string> base = {"steps=1", "routing.drift=0"};
  auto plain = base, ad = base;
  plain.push_back("schedule.kind=1f1b");
  ad.push_back("schedule.kind=adaptive_pipe");
  auto [n1, f1, e1, s1] = Forward(SimulateTinyMoe(plain, {0}), 0, 0);
  auto [n2, f2, e2, s2] = Forward(SimulateTinyMoe(ad, {0}), 0, 0);
  // Stage 0 holds 2 layers (the dense one, an MoE one) and the embedding:
  // 25 compute ops, each run twice with half of its FLOPs (the sum is exact).
  EXPECT_EQ(n1, 25);
  EXPECT_EQ(n2, 2 * n1);
  EXPECT_EQ(f2, f1);
  // The chunk's output leaves once, after both halves.
  EXPECT_GE(s2, e2);
  EXPECT_GE(s1, e1);
}

TEST(Adaptive, WeightGradientsLeaveTheChainAndFollowTheAllToAll) {
  // PP 2, 4 micro-batches: stage 0 runs micro-batch 0's backward in a fused
  // pair. Each backward grouped GEMM runs as two ops (input and weight
  // gradient) with the backward's FLOPs between them; the weight gradient
  // is issued after the layer's dispatch gradient, so it starts no earlier.
  auto grads = [](const Trace& t, const std::string& name) {
    std::map<int, std::vector<std::pair<TimeNs, uint64_t>>> by_layer;  // layer -> (start, flops)
    for (const Track& tr : t.ranks[0].tracks)
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (tr.events.micro_batch[i] == 0 && t.ranks[0].strings.Get(tr.events.name[i]) == name)
          by_layer[tr.events.layer[i]].emplace_back(tr.events.ts[i], tr.events.flops[i]);
    return by_layer;
  };
  Trace plain = SimulateTinyMoe({"steps=1", "schedule.kind=1f1b"}, {0});
  Trace ad = SimulateTinyMoe({"steps=1", "schedule.kind=adaptive_pipe"}, {0});
  auto before = grads(plain, "GroupedMatmul_gate_upGrad"), after = grads(ad, "GroupedMatmul_gate_upGrad");
  auto dispatch = grads(ad, "HcomAllToAllV_dispatchGrad");
  ASSERT_EQ(before.size(), 1u);  // stage 0's one MoE layer
  for (auto& [layer, ops] : before) {
    ASSERT_EQ(ops.size(), 1u);
    ASSERT_EQ(after[layer].size(), 2u);
    EXPECT_EQ(after[layer][0].second + after[layer][1].second, ops[0].second);
    ASSERT_EQ(dispatch[layer].size(), 1u);
    TimeNs wgrad = std::max(after[layer][0].first, after[layer][1].first);
    EXPECT_GE(wgrad, dispatch[layer][0].first);
  }
}

TEST(Adaptive, OneMoreWarmupForwardSoNoPairHoldsOneMicroBatch) {
  // PP 4, VPP 2, 8 micro-batches. Megatron's VPP warms stage s up with
  // 2(p-s-1) + (v-1)p forwards; adaptive pipe with one more (MindSpeed's
  // --moe-fb-overlap, Megatron's combined 1F1B), so at the last stage no
  // steady pair is a micro-batch's forward with its own backward.
  const ScheduleShape ad{"adaptive", 4, 2, 8}, pipe{"adaptive_pipe", 4, 2, 8};
  auto warmup = [](const std::vector<PipeItem>& items) {
    int n = 0;
    while (n < int(items.size()) && !items[n].fused && !items[n].a.backward) ++n;
    return n;
  };
  auto same_mb_pairs = [](const std::vector<PipeItem>& items) {
    int n = 0;
    for (const PipeItem& it : items)
      if (it.fused && it.a.mb == it.b.mb && it.a.model_stage == it.b.model_stage) ++n;
    return n;
  };
  const int expect_ad[4] = {10, 8, 6, 4};
  for (int s = 0; s < 4; ++s) {
    auto a = StageSchedule(ad, s), p = StageSchedule(pipe, s);
    EXPECT_EQ(warmup(a), expect_ad[s]) << s;
    EXPECT_EQ(warmup(p), expect_ad[s] + 1) << s;
    // 16 forwards and 16 backwards: one fused pair fewer, one more unpaired
    // forward and backward.
    EXPECT_EQ(p.size(), a.size() + 1) << s;
    EXPECT_EQ(same_mb_pairs(p), 0) << s;
  }
  // Megatron's count at the last stage: the last slice's forward and
  // backward of micro-batches 0-3 and again of 4-7 fall in one pair.
  EXPECT_EQ(same_mb_pairs(StageSchedule(ad, 3)), 8);
}

TEST(Adaptive, CombineGradientLaunchedAfterTheForwardAttentionsAllGather) {
  // TP 2 with sequence parallelism, PP 2, 8 micro-batches; stage 0 holds the
  // dense layer and one MoE layer. In a fused pair the backward's combine
  // gradient waits for the forward attention's TP all-gather issued after
  // it (MindSpeed's a2a_hooked_on_attention); without it, it would start as
  // soon as MoeFinalizeRoutingGrad ends, before that all-gather does.
  Trace t = SimulateTinyMoe({"steps=1", "parallel.tp=2", "parallel.sp=true", "parallel.dp=4", "parallel.ep=4",
                      "schedule.kind=adaptive_pipe"},
                     {0});
  std::vector<std::pair<TimeNs, TimeNs>> gathers;  // forward TP all-gathers
  std::map<std::pair<int, int>, std::vector<TimeNs>> finalize, combine;  // (mb, layer) -> ends / starts
  const Rank& r = t.ranks[0];
  for (const Track& tr : r.tracks)
    for (size_t i = 0; i < tr.events.size(); ++i) {
      const std::string_view n = r.strings.Get(tr.events.name[i]);
      const auto key = std::make_pair(tr.events.micro_batch[i], tr.events.layer[i]);
      if (n == "HcomAllGather_tp" && tr.events.phase[i] == Phase::kForward)
        gathers.emplace_back(tr.events.ts[i], tr.events.End(i));
      if (n == "MoeFinalizeRoutingGrad") finalize[key].push_back(tr.events.End(i));
      if (n == "HcomAllToAllV_combineGrad") combine[key].push_back(tr.events.ts[i]);
    }
  std::sort(gathers.begin(), gathers.end());
  int hooked = 0, alone = 0;
  for (auto& [key, starts] : combine) {
    auto& ends = finalize[key];
    ASSERT_EQ(ends.size(), starts.size());
    std::sort(ends.begin(), ends.end());
    std::sort(starts.begin(), starts.end());
    for (size_t k = 0; k < starts.size(); ++k) {
      auto g = std::lower_bound(gathers.begin(), gathers.end(), std::make_pair(ends[k], TimeNs(0)));
      if (g == gathers.end()) {
        ++alone;  // a cooldown backward: no forward left to hook on
        continue;
      }
      EXPECT_GE(starts[k], g->second) << key.first;
      ++hooked;
    }
  }
  // 8 micro-batches, warmup 2 (1 + the extra one): 6 fused pairs; the 2
  // cooldown backwards run as two halves each.
  EXPECT_EQ(hooked, 6);
  EXPECT_EQ(alone, 4);
}

TEST(Adaptive, PairsLastWeightGradientsFollowTheForwardsTail) {
  // PP 2, 8 micro-batches; stage 0 warms up with F0, F1 (one more than
  // 1F1B), then pairs F(k+2) with B(k). The backward chunk's last weight
  // gradients are issued after the whole pair, so the forward's tail (and
  // its output's send) no longer queues behind them: the backward's last
  // compute op is a weight gradient starting after the forward's last one.
  Trace t = SimulateTinyMoe({"steps=1", "parallel.global_batch_size=64", "schedule.kind=adaptive_pipe"}, {0});
  const Rank& r = t.ranks[0];
  std::map<int, std::pair<TimeNs, TimeNs>> fwd_last;  // mb -> (start, end) of the last forward compute op
  std::map<int, std::pair<TimeNs, std::string>> bwd_last;  // mb -> (start, name) of the last backward one
  for (const Track& tr : r.tracks)
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.category[i] != Category::kCompute) continue;
      const int mb = tr.events.micro_batch[i];
      if (tr.events.phase[i] == Phase::kForward) {
        auto& f = fwd_last[mb];
        if (tr.events.ts[i] >= f.first) f = {tr.events.ts[i], tr.events.End(i)};
      } else if (tr.events.phase[i] == Phase::kBackward) {
        auto& b = bwd_last[mb];
        if (tr.events.ts[i] >= b.first) b = {tr.events.ts[i], std::string(r.strings.Get(tr.events.name[i]))};
      }
    }
  int after = 0;
  for (int k = 0; k < 6; ++k) {
    EXPECT_GE(bwd_last[k].first, fwd_last[k + 2].second) << k;
    EXPECT_TRUE(bwd_last[k].second.starts_with("MatMul_")) << bwd_last[k].second;
    after += bwd_last[k].first >= fwd_last[k + 2].second;
  }
  EXPECT_EQ(after, 6);
}

TEST(Adaptive, CooldownBackwardSendsBeforeItsWeightGradients) {
  // PP 2, 8 micro-batches: stage 1 (layers 2 and 3, both MoE) ends with one
  // cooldown backward, micro-batch 7. Its input gradients run first (as two
  // halves) and its gradient leaves for stage 0; then its 10 weight
  // gradients (q, kv and o projections, grouped gate-up and down, per layer;
  // the shared expert's backward runs whole beside the combine gradient),
  // each for the whole micro-batch, as DualPipe's cooldown does.
  Trace t = SimulateTinyMoe({"steps=1", "parallel.global_batch_size=64", "schedule.kind=adaptive_pipe"}, {8});
  const Rank& r = t.ranks[0];
  TimeNs send = -1;
  std::vector<std::pair<TimeNs, std::string>> bwd;  // backward compute ops of micro-batch 7
  for (const Track& tr : r.tracks)
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.micro_batch[i] != 7 || tr.events.phase[i] != Phase::kBackward) continue;
      const std::string_view n = r.strings.Get(tr.events.name[i]);
      if (n == "HcomSend") send = tr.events.ts[i];
      if (tr.events.category[i] == Category::kCompute) bwd.emplace_back(tr.events.ts[i], std::string(n));
    }
  ASSERT_GE(send, 0);
  int after = 0;
  for (auto& [ts, name] : bwd)
    if (ts >= send) {
      ++after;
      EXPECT_TRUE(name.ends_with("Grad") && (name.starts_with("MatMul_") || name.starts_with("GroupedMatmul_")))
          << name;
    }
  EXPECT_EQ(after, 10);
}

int64_t Weights(const Trace& t) {
  int64_t sum = 0;
  for (const Rank& r : t.ranks)
    for (const Track& tr : r.tracks)
      if (tr.kind == TrackKind::kCounter && tr.counter == CounterKind::kMemWeights) sum += int64_t(tr.sample_value[0]);
  return sum;
}

TEST(Adaptive, HoldsHalfOfDualPipesWeights) {
  // PP 2, 8 layers: DualPipe gives each rank slices s and p-1-s of 2 (the
  // whole model, twice over the pipeline); Adaptive Pipe (VPP 2) gives each
  // rank 2 of 4 slices (the model once over the pipeline).
  std::vector<std::string> base = {"steps=1", "model.num_layers=8", "parallel.global_batch_size=64"};
  auto dual = base, ad = base;
  dual.push_back("schedule.kind=dualpipe");
  ad.push_back("schedule.kind=adaptive_pipe");
  ad.push_back("parallel.vpp=2");
  const std::vector<int32_t> ranks = {0, 8};  // stage 0 and stage 1
  const int64_t w_dual = Weights(SimulateTinyMoe(dual, ranks)), w_ad = Weights(SimulateTinyMoe(ad, ranks));
  EXPECT_EQ(w_ad, 235110400);  // bf16 weights of tiny-moe's 8 layers, embedding and head, EP 8
  EXPECT_EQ(w_dual, 2 * w_ad);
}

TEST(Adaptive, ActivationsStayUntilTheLastWeightGradientReadsThem) {
  // The reviewer's case (issue #17): stage 1's cooldown backward of
  // micro-batch 7 issues its 10 weight gradients after its p2p send. A
  // weight gradient computes x^T dy, so the layer's kept activations stay
  // until its last one has run: the activation counter falls to 0 at the
  // end of the last weight gradient, not at the end of the input gradients.
  Trace t = SimulateTinyMoe({"steps=1", "parallel.global_batch_size=64", "schedule.kind=adaptive_pipe"}, {8});
  const Rank& r = t.ranks[0];
  TimeNs send = -1;
  std::vector<std::pair<TimeNs, TimeNs>> compute;  // backward compute ops of micro-batch 7: (start, end)
  for (const Track& tr : r.tracks)
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.micro_batch[i] != 7 || tr.events.phase[i] != Phase::kBackward) continue;
      if (r.strings.Get(tr.events.name[i]) == "HcomSend") send = tr.events.ts[i];
      if (tr.events.category[i] == Category::kCompute) compute.emplace_back(tr.events.ts[i], tr.events.End(i));
    }
  ASSERT_GE(send, 0);
  // The compute ops after the send are the 10 weight gradients
  // (CooldownBackwardSendsBeforeItsWeightGradients).
  TimeNs wgrad_end = -1;
  int wgrads = 0;
  for (auto& [ts, end] : compute)
    if (ts >= send) {
      ++wgrads;
      wgrad_end = std::max(wgrad_end, end);
    }
  EXPECT_EQ(wgrads, 10);
  const Track* acts = nullptr;
  for (const Track& tr : r.tracks)
    if (tr.kind == TrackKind::kCounter && tr.counter == CounterKind::kMemActivations) acts = &tr;
  ASSERT_NE(acts, nullptr);
  ASSERT_GE(acts->sample_ts.size(), 2u);
  // The last sample is the last release: to 0, at the last weight
  // gradient's end (before the fix: at 1020715.360 us, the input gradients' end,
  // 256.4 us before it, with launch_ns 10 us). The pin is the simulation's and
  // moves with the host calibration: 1,020,971,765 with launch_ns 10 us,
  // 1,021,176,995 with the mean launch of 18.46 us (atlas-800t-a2).
  EXPECT_EQ(acts->sample_value.back(), 0.0);
  EXPECT_EQ(acts->sample_ts.back(), wgrad_end);
  EXPECT_EQ(wgrad_end, TimeNs(1021176995));
  EXPECT_GT(acts->sample_value[acts->sample_value.size() - 2], 0.0);
  // Held longer, the activations of several layers and micro-batches now
  // overlap: the rank's activation peak, 262,711,296 B before the fix.
  double peak = 0;
  for (double v : acts->sample_value) peak = std::max(peak, v);
  EXPECT_EQ(peak, 353123328.0);
}

}  // namespace
}  // namespace moetrace::tracegen
