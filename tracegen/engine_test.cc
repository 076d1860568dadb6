// Tests of the model against closed forms: pipeline bubbles, Korthikanti
// activation memory, all-to-all waiting for the slowest member, determinism,
// and the exact partition of the ground-truth labels.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"
#include "tracegen/labels.h"
#include "tracegen/model.h"

namespace moetrace::tracegen {
namespace {

double Label(const Trace& t, int rank, int step, const std::string& key) {
  for (const auto& l : t.metadata.ground_truth)
    if (l.rank == rank && l.step == step && l.key == key) return l.value;
  ADD_FAILURE() << "no label " << key << " rank " << rank << " step " << step;
  return -1;
}

double SumLabel(const Trace& t, const std::string& key) {
  double v = 0;
  for (const auto& l : t.metadata.ground_truth)
    if (l.step == -1 && l.key == key) v += l.value;
  return v;
}

Trace Simulate(const std::string& preset, std::vector<std::string> sets, std::vector<int32_t> ranks = {}) {
  RunConfig c = BuildConfig({preset, "", sets, 0});
  MemorySink sink;
  Generate(c, ranks, sink);
  return std::move(sink.trace());
}

// Everything but the pipeline switched off: free communication, no launch
// cost, no memory-bound time, no kernel overhead, dense equal stages.
std::vector<std::string> PipelineOnly(int pp, int vpp, int micro, int layers, const char* kind) {
  return {"model.num_experts=0",
          "model.num_layers=" + std::to_string(layers),
          "model.dense_layers=" + std::to_string(layers),
          "model.vocab=1",
          "parallel.dp=1", "parallel.ep=1", "parallel.tp=1",
          "parallel.pp=" + std::to_string(pp), "parallel.vpp=" + std::to_string(vpp),
          "parallel.world_size=" + std::to_string(pp),
          "parallel.micro_batch_size=1",
          "parallel.global_batch_size=" + std::to_string(micro),
          std::string("schedule.kind=") + kind,
          "hardware.alpha_intra_ns=0", "hardware.alpha_inter_ns=0",
          "hardware.intra_node_bandwidth=1e30", "hardware.inter_node_bandwidth=1e30",
          "hardware.hbm_bandwidth=1e30", "hardware.kernel_overhead_ns=0",
          "hardware.framework_op_ns=0", "hardware.launch_ns=0", "hardware.enqueue_ns=0",
          "hardware.d2h_sync_ns=0", "steps=1"};
}

void ExpectBubble(const Trace& t, double expected) {
  for (const Rank& r : t.ranks) {
    double span = Label(t, r.rank, 0, "breakdown.span_ns");
    double compute = Label(t, r.rank, 0, "breakdown.compute_ns");
    double ratio = (span - compute) / compute;
    EXPECT_NEAR(ratio, expected, 0.01 * expected) << "rank " << r.rank;
  }
}

TEST(Engine, OneFOneBBubbleIsPMinus1OverM) {
  // p = 4, m = 8: (p-1)/m = 0.375.
  ExpectBubble(Simulate("tiny-moe", PipelineOnly(4, 1, 8, 8, "1f1b")), 3.0 / 8);
  // p = 4, m = 32
  ExpectBubble(Simulate("tiny-moe", PipelineOnly(4, 1, 32, 8, "1f1b")), 3.0 / 32);
}

TEST(Engine, InterleavedBubbleIsPMinus1OverVM) {
  // p = 4, v = 2, m = 8: (p-1)/(v*m) = 3/16.
  ExpectBubble(Simulate("tiny-moe", PipelineOnly(4, 2, 8, 16, "interleaved")), 3.0 / 16);
  ExpectBubble(Simulate("tiny-moe", PipelineOnly(4, 4, 8, 16, "interleaved")), 3.0 / 32);
}

TEST(Engine, PipelineWaitShowsAsExposedReceive) {
  Trace t = Simulate("tiny-moe", PipelineOnly(4, 1, 8, 8, "1f1b"));
  // The first stage never receives activations; every later stage waits
  // for them at the start of the step: bubble > 0 there, and bubble is part
  // of the exposed communication.
  for (const Rank& r : t.ranks) {
    double bubble = Label(t, r.rank, 0, "breakdown.bubble_ns");
    EXPECT_LE(bubble, Label(t, r.rank, 0, "breakdown.comm_exposed_ns"));
    EXPECT_GT(bubble, 0) << r.rank;
  }
}

double PeakActivations(const Trace& t) {
  double peak = 0;
  for (const Track& tr : t.ranks[0].tracks)
    if (tr.kind == TrackKind::kCounter && tr.counter == CounterKind::kMemActivations)
      for (double v : tr.sample_value) peak = std::max(peak, v);
  return peak;
}

TEST(Engine, DenseActivationMemoryIsKorthikanti) {
  // One dense GPT-style layer (MHA, ffn = 4h), one micro-batch in flight.
  const double s = 1024, b = 2, h = 1024, a = 8;
  auto sets = [&](int tp, const char* recompute) {
    return std::vector<std::string>{
        "model.num_experts=0", "model.num_layers=1", "model.dense_layers=1",
        "model.q_lora_rank=0", "model.kv_lora_rank=0", "model.hidden=1024",
        "model.num_heads=8", "model.dense_ffn=4096", "model.seq_length=1024",
        "parallel.dp=1", "parallel.ep=1", "parallel.pp=1", "parallel.tp=" + std::to_string(tp),
        "parallel.sp=true", "parallel.world_size=" + std::to_string(tp),
        "parallel.micro_batch_size=2", "parallel.global_batch_size=2",
        std::string("memory.recompute=") + recompute, "steps=1"};
  };
  EXPECT_DOUBLE_EQ(PeakActivations(Simulate("tiny-moe", sets(1, "none"))),
                   s * b * h * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(PeakActivations(Simulate("tiny-moe", sets(2, "none"))),
                   s * b * h / 2 * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(PeakActivations(Simulate("tiny-moe", sets(2, "selective"))), 34 * s * b * h / 2);
  // Without sequence parallelism: sbh (10 + 24/t + 5as/(ht)).
  auto no_sp = sets(2, "none");
  no_sp[13] = "parallel.sp=false";
  EXPECT_DOUBLE_EQ(PeakActivations(Simulate("tiny-moe", no_sp)),
                   s * b * h * (10 + 24.0 / 2 + 5 * a * s / (h * 2)));
}

TEST(Engine, AllToAllWaitsForOverloadedRank) {
  // Strong skew: one EP rank receives far more tokens, runs a longer
  // grouped GEMM and arrives last at the combine; everyone waits for it.
  Trace t = Simulate("tiny-moe", {"routing.skew=2.5", "routing.drift=0", "parallel.pp=1",
                             "parallel.dp=16", "parallel.ep=16", "parallel.global_batch_size=16",
                             "host.task_queue=false", "steps=1"});
  // (sequence) -> per rank (start, end, received bytes)
  std::map<int64_t, std::vector<std::tuple<TimeNs, TimeNs, uint64_t, int>>> combines;
  for (const Rank& r : t.ranks) {
    for (const Track& tr : r.tracks) {
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (r.strings.Get(tr.events.name[i]) != "HcomAllToAllV_combine") continue;
        const CommRecord& c = tr.comms[tr.events.comm[i]];
        uint64_t recv = 0;
        for (auto v : tr.Splits(c.send_splits)) recv += v;  // combine sends back what dispatch received
        combines[c.sequence].emplace_back(tr.events.ts[i], tr.events.End(i), recv, r.rank);
      }
    }
  }
  ASSERT_FALSE(combines.empty());
  for (auto& [seq, members] : combines) {
    ASSERT_EQ(members.size(), 16u);
    TimeNs end = std::get<1>(members[0]);
    auto last = std::max_element(members.begin(), members.end());  // latest arrival
    auto heaviest = std::max_element(members.begin(), members.end(), [](auto& x, auto& y) {
      return std::get<2>(x) < std::get<2>(y);
    });
    EXPECT_EQ(std::get<3>(*last), std::get<3>(*heaviest)) << "seq " << seq;
    for (auto& m : members) {
      EXPECT_EQ(std::get<1>(m), end);  // all finish together
      EXPECT_GE(std::get<1>(m) - std::get<0>(m), std::get<0>(*last) - std::get<0>(m));
    }
  }
}

TEST(Engine, SameSeedSameTrace) {
  Trace a = Simulate("tiny-moe", {});
  Trace b = Simulate("tiny-moe", {});
  EXPECT_TRUE(a == b);
  Trace c = Simulate("tiny-moe", {"seed=2"});
  EXPECT_FALSE(a.ranks == c.ranks);
}

TEST(Engine, SelectedRanksMatchFullRun) {
  Trace all = Simulate("tiny-moe", {});
  Trace some = Simulate("tiny-moe", {}, {3, 12});
  ASSERT_EQ(some.ranks.size(), 2u);
  EXPECT_TRUE(some.ranks[0] == all.ranks[3]);
  EXPECT_TRUE(some.ranks[1] == all.ranks[12]);
}

void ExpectPartition(const Trace& t) {
  std::map<std::pair<int, int>, std::map<std::string, double>> by;
  for (const auto& l : t.metadata.ground_truth) by[{l.rank, l.step}][l.key] = l.value;
  ASSERT_FALSE(by.empty());
  for (auto& [k, v] : by) {
    EXPECT_EQ(v["breakdown.span_ns"], v["breakdown.compute_ns"] + v["breakdown.comm_exposed_ns"] +
                                          v["breakdown.copy_exposed_ns"] + v["breakdown.free_ns"])
        << "rank " << k.first << " step " << k.second;
    EXPECT_LE(v["breakdown.host_bound_ns"], v["breakdown.free_ns"]);
    EXPECT_EQ(v["breakdown.host_bound_ns"],
              v["breakdown.host_bound_sync_ns"] + v["breakdown.host_bound_dispatch_ns"]);
    EXPECT_LE(v["breakdown.bubble_ns"], v["breakdown.comm_exposed_ns"]);
    EXPECT_GT(v["breakdown.span_ns"], 0);
  }
}

TEST(Engine, LabelsPartitionEveryStep) {
  ExpectPartition(Simulate("tiny-moe", {}));
  ExpectPartition(Simulate("tiny-moe", {"memory.swap=true", "memory.recompute=full",
                                   "host.sync_before_a2a=true", "host.task_queue=false"}));
  ExpectPartition(Simulate("tiny-moe", {"schedule.kind=adaptive", "parallel.vpp=2",
                                   "parallel.global_batch_size=32"}));
  ExpectPartition(Simulate("tiny-moe", {"schedule.kind=dualpipe", "model.num_layers=4"}));
}

int CountDevice(const Trace& t, const std::string& name, Phase phase) {
  int n = 0;
  const Rank& r = t.ranks[0];
  for (const Track& tr : r.tracks)
    if (tr.kind == TrackKind::kDeviceStream)
      for (size_t i = 0; i < tr.events.size(); ++i)
        if (tr.events.phase[i] == phase && r.strings.Get(tr.events.name[i]) == name) ++n;
  return n;
}

TEST(Engine, SyncBeforeDispatchIsHostBoundSync) {
  Trace base = Simulate("tiny-moe", {"steps=1"});
  Trace sync = Simulate("tiny-moe", {"steps=1", "host.sync_before_a2a=true"});
  double b = 0, s = 0;
  for (int r = 0; r < 16; ++r) {
    b += Label(base, r, 0, "breakdown.host_bound_sync_ns");
    s += Label(sync, r, 0, "breakdown.host_bound_sync_ns");
  }
  EXPECT_GT(s, b);
  int syncs = 0;
  for (const Track& tr : sync.ranks[0].tracks)
    for (size_t i = 0; i < tr.events.size(); ++i)
      if (tr.kind == TrackKind::kHostThread && tr.events.category[i] == Category::kSync &&
          (tr.events.flags[i] & kFlagBlocking))
        ++syncs;
  EXPECT_GT(syncs, 1);
  // The counts are all-gathered over the EP group; the host reads them twice
  // (input_splits from the local counts before the gather, output_splits
  // from the gathered ones after it) and converts each on the host.
  EXPECT_GT(CountDevice(sync, "HcomAllGather_token_counts", Phase::kForward), 0);
  int lists = 0;
  for (const Track& tr : sync.ranks[0].tracks)
    for (size_t i = 0; i < tr.events.size(); ++i)
      if (tr.kind == TrackKind::kHostThread && tr.events.category[i] == Category::kHostOp) ++lists;
  EXPECT_EQ(lists, 2 * CountDevice(sync, "HcomAllGather_token_counts", Phase::kForward));
}

TEST(Engine, SlowDispatchIsHostBoundDispatch) {
  // Small ops, no task queue, cross-NUMA host: the device waits for launches.
  Trace fast = Simulate("tiny-moe", {"steps=1"});
  Trace slow = Simulate("tiny-moe", {"steps=1", "host.task_queue=false", "host.numa_affinity=false"});
  double f = SumLabel(fast, "breakdown.host_bound_dispatch_ns");
  double s = SumLabel(slow, "breakdown.host_bound_dispatch_ns");
  EXPECT_GT(s, f);
  EXPECT_GT(s, 0.02 * SumLabel(slow, "breakdown.span_ns"));
}

TEST(Engine, RecomputeAndSwapAreTagged) {
  Trace t = Simulate("tiny-moe", {"memory.swap=true", "memory.recompute=full", "steps=1"});
  int recompute = 0, out = 0, in = 0;
  for (const Track& tr : t.ranks[0].tracks) {
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.phase[i] == Phase::kRecompute && tr.kind == TrackKind::kDeviceStream) ++recompute;
      if (tr.events.flags[i] & kFlagSwapOut) {
        ++out;
        EXPECT_EQ(tr.events.category[i], Category::kCopy);
      }
      if (tr.events.flags[i] & kFlagSwapIn) ++in;
    }
  }
  EXPECT_GT(recompute, 0);
  EXPECT_GT(out, 0);
  EXPECT_EQ(out, in);
  // Less activation memory than without recompute and swap.
  EXPECT_LT(PeakActivations(t), PeakActivations(Simulate("tiny-moe", {"steps=1"})));
}

TEST(Engine, SelectiveRecomputesAttentionCoreAndActivationFunction) {
  // tiny-moe, one step: stage 0 holds layers 0 (dense) and 1 (MoE), 4 micro-batches.
  Trace t = Simulate("tiny-moe", {"memory.recompute=selective", "steps=1"}, {0});
  EXPECT_EQ(CountDevice(t, "FlashAttentionScore", Phase::kRecompute), 2 * 4);
  EXPECT_EQ(CountDevice(t, "SwiGlu_experts", Phase::kRecompute), 1 * 4);
  EXPECT_EQ(CountDevice(t, "SwiGlu_shared", Phase::kRecompute), 1 * 4);
  EXPECT_EQ(CountDevice(t, "SwiGlu", Phase::kRecompute), 0);  // dense layer keeps its MLP
  // Dropping the SwiGLU outputs and the (never materialised) scores lowers the peak.
  Trace none = Simulate("tiny-moe", {"memory.recompute=none", "steps=1"}, {0});
  EXPECT_LT(PeakActivations(t), PeakActivations(none));
}

TEST(Engine, SwapOfNamedTensorsLowersActivations) {
  Trace sel = Simulate("tiny-moe", {"memory.recompute=selective", "steps=1"}, {0});
  Trace swap = Simulate("tiny-moe", {"memory.recompute=selective", "memory.swap=true", "steps=1"}, {0});
  EXPECT_LT(PeakActivations(swap), PeakActivations(sel));
  EXPECT_GT(CountDevice(swap, "MemcpyD2H_swap_out", Phase::kForward), 0);
  EXPECT_EQ(CountDevice(swap, "MemcpyD2H_swap_out", Phase::kForward),
            CountDevice(swap, "MemcpyH2D_swap_in", Phase::kBackward));
}

// A backward layer waits for its swap-in at the first op that reads a
// swapped tensor, as the swap hooks do (the unpack hook waits for the copy):
// the attention output projection's gradient (attention module's tensors)
// or the expert gate/up GEMM's (the dispatched tokens); the ops before it
// read only what stayed on the device and run while the copy ends. The
// swap-out starts once that GEMM's forward has saved the tensor (the pack
// hook), not when the layer ends. TP 8 with EP across nodes and a 2 GB/s
// host link make the copies as long as the layers' forwards, so the waits
// show. Before, the layer's first backward op waited (0 of the 16 ran
// before their swap-in ended) and the swap-outs started at the layers' ends.
TEST(Engine, BackwardWaitsForItsSwapInAtTheFirstReader) {
  Trace t = Simulate("tiny-moe", {"steps=1", "parallel.world_size=64", "parallel.tp=8", "parallel.dp=4",
                                  "parallel.ep=4", "parallel.vpp=2", "schedule.kind=interleaved",
                                  "memory.swap=true", "hardware.host_link_bandwidth=2e9"},
                     {0});
  const Rank& r = t.ranks[0];
  using Key = std::pair<int, int>;
  std::map<Key, TimeNs> in_end, out_start, first_bwd, reader, saver_end;
  for (const Track& tr : r.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      const Key key{tr.events.micro_batch[i], tr.events.layer[i]};
      const TimeNs ts = tr.events.ts[i];
      const std::string_view name = r.strings.Get(tr.events.name[i]);
      if (tr.events.flags[i] & kFlagSwapIn) {
        in_end[key] = ts + tr.events.dur[i];
      } else if (tr.events.flags[i] & kFlagSwapOut) {
        out_start[key] = ts;
      } else if (tr.events.phase[i] == Phase::kForward && name == "MatMul_o_proj") {
        saver_end[key] = ts + tr.events.dur[i];
      } else if (tr.events.phase[i] == Phase::kBackward) {
        auto [it, fresh] = first_bwd.emplace(key, ts);
        if (!fresh) it->second = std::min(it->second, ts);
        if (name == "MatMul_o_projGrad" && !reader.count(key)) reader[key] = ts;
      }
    }
  }
  // Stage 0 holds layers 0 and 2 (one per virtual stage), 8 micro-batches;
  // the link takes only part of the attention module's tensors.
  ASSERT_EQ(in_end.size(), 16u);
  int early = 0, at_saver = 0;  // the rest queue behind earlier copies
  for (const auto& [key, end] : in_end) {
    ASSERT_TRUE(reader.count(key)) << "mb " << key.first << " layer " << key.second;
    EXPECT_GE(reader[key], end) << "mb " << key.first << " layer " << key.second;
    EXPECT_GE(out_start[key], saver_end[key]) << "mb " << key.first << " layer " << key.second;
    early += first_bwd[key] < end;
    at_saver += out_start[key] == saver_end[key];
  }
  EXPECT_EQ(early, 6);
  EXPECT_EQ(at_saver, 13);
}

// At the last stage the adaptive schedule pairs a micro-batch's forward
// with its own backward (warmup 0): the backward starts from the loss, so
// no backward op of a micro-batch may start before its forward has ended.
TEST(Engine, AdaptiveLastStageRunsTheBackwardAfterItsForward) {
  Trace t = Simulate("tiny-moe", {"steps=1", "schedule.kind=adaptive"}, {8});  // stage 1 of 2
  const Rank& r = t.ranks[0];
  std::map<int, TimeNs> fwd_end, bwd_start;
  for (const Track& tr : r.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.category[i] != Category::kCompute) continue;
      const int mb = tr.events.micro_batch[i];
      if (tr.events.phase[i] == Phase::kForward) {
        fwd_end[mb] = std::max(fwd_end[mb], tr.events.ts[i] + tr.events.dur[i]);
      } else if (tr.events.phase[i] == Phase::kBackward) {
        auto [it, fresh] = bwd_start.emplace(mb, tr.events.ts[i]);
        if (!fresh) it->second = std::min(it->second, tr.events.ts[i]);
      }
    }
  }
  ASSERT_EQ(fwd_end.size(), 4u);  // batch 32 over DP 8, MBS 1
  ASSERT_EQ(bwd_start.size(), 4u);
  for (const auto& [mb, end] : fwd_end) EXPECT_GE(bwd_start[mb], end) << "micro-batch " << mb;
}

TEST(Engine, RoutingRecordsAndEdpb) {
  Trace t = Simulate("tiny-moe", {"routing.skew=0.7", "routing.drift=0", "steps=3"});
  ASSERT_FALSE(t.ranks[0].routing.empty());
  const RoutingRecord& r = t.ranks[0].routing[0];
  EXPECT_EQ(r.tokens_per_expert.size(), 16u);
  int64_t sum = 0;
  for (auto v : r.tokens_per_expert) sum += v;
  EXPECT_EQ(sum, 1024 * 4);  // tokens x top-k
  Trace e = Simulate("tiny-moe", {"routing.skew=0.7", "routing.drift=0", "steps=3", "routing.edpb=true"});
  // EDPB balances EP-rank loads from step 1 on (placement from predicted loads).
  EXPECT_LT(Label(e, 0, 2, "expert_imbalance.ep_max_vio"), Label(t, 0, 2, "expert_imbalance.ep_max_vio"));
  bool migrated = false;
  for (const Track& tr : e.ranks[0].tracks)
    for (size_t i = 0; i < tr.events.size(); ++i)
      if (e.ranks[0].strings.Get(tr.events.name[i]) == "ExpertMigration") migrated = true;
  EXPECT_TRUE(migrated);
}

TEST(Engine, AdaptivePipeMasksExpertCommunication) {
  std::vector<std::string> base = {"parallel.vpp=2", "model.num_layers=8", "model.dense_layers=0", "routing.skew=0", "parallel.global_batch_size=128",
                                   "steps=1"};
  auto interleaved = base, adaptive = base;
  interleaved.push_back("schedule.kind=interleaved");
  adaptive.push_back("schedule.kind=adaptive");
  Trace a = Simulate("tiny-moe", interleaved), b = Simulate("tiny-moe", adaptive);
  double ea = SumLabel(a, "comm_by_class.EP.exposed_ns") / SumLabel(a, "comm_by_class.EP.total_ns");
  double eb = SumLabel(b, "comm_by_class.EP.exposed_ns") / SumLabel(b, "comm_by_class.EP.total_ns");
  EXPECT_GT(ea, 0.5);
  EXPECT_LT(eb, ea / 2);
}

TEST(Engine, FusedScheduleIssuesCollectivesInTheSameOrderOnEveryMember) {
  // Skewed routing makes grouped-GEMM times differ per rank; the F&B issue
  // order must not (a mismatch would deadlock or pair the wrong ops).
  for (const char* extend : {"parallel.tp_extend_ep=true", "parallel.tp_extend_ep=false"}) {
    Trace t = Simulate("tiny-moe", {"parallel.tp=2", "parallel.dp=4", "parallel.ep=2", extend,
                                    "parallel.sp=true", "parallel.vpp=2", "model.num_layers=8",
                                    "parallel.global_batch_size=32", "schedule.kind=adaptive",
                                    "routing.skew=1.5", "steps=1"});
    ExpectPartition(t);
  }
  ExpectPartition(Simulate("tiny-moe", {"schedule.kind=dualpipe", "routing.skew=1.5",
                                        "parallel.global_batch_size=64", "steps=1"}));
}

TEST(Engine, HierarchicalAllToAllIsFasterAcrossNodes) {
  // EP 16 spans two 8-NPU nodes; top-4 of 16 experts: copies to the same
  // remote node are sent once.
  std::vector<std::string> base = {"parallel.pp=1", "parallel.dp=16", "parallel.ep=16",
                                   "parallel.global_batch_size=64", "steps=1"};
  auto flat = base, hier = base;
  flat.push_back("comm.a2a=flat");
  hier.push_back("comm.a2a=hierarchical");
  double f = SumLabel(Simulate("tiny-moe", flat), "comm_by_class.EP.total_ns");
  double h = SumLabel(Simulate("tiny-moe", hier), "comm_by_class.EP.total_ns");
  EXPECT_LT(h, f * 0.8);
}

TEST(Engine, MetadataCarriesConfigAndModel) {
  Trace t = Simulate("tiny-moe", {});
  EXPECT_EQ(t.metadata.source, "tracegen");
  EXPECT_EQ(t.metadata.layout.world_size, 16);
  EXPECT_EQ(t.metadata.layout.pp, 2);
  EXPECT_EQ(t.metadata.tokens_per_step, 32 * 1024);
  EXPECT_GT(t.metadata.model_flops_per_step, 0);
  EXPECT_NE(t.metadata.config_json.find("\"micro_batch_size\""), std::string::npos);
  RunConfig back = ParseConfigJson(t.metadata.config_json, "metadata");
  EXPECT_EQ(back.parallel().ep(), 8);
}

// Hardware FLOPs = model FLOPs + what recompute re-runs, per step (32
// sequences of 1,024 tokens, MBS 1 on tiny-moe). Attention core of one
// micro-batch: 2 x 1 x 1024^2 x 8 heads x (64 + 32 + 64) x 0.5 = 1,342,177,280.
TEST(Engine, HardwareFlopsAddTheRecomputedForward) {
  auto hardware = [](const Trace& t) {
    for (const auto& [k, v] : t.metadata.attributes)
      if (k == "tracegen.hardware_flops_per_step") return std::stod(v);
    return -1.0;
  };
  Trace none = Simulate("tiny-moe", {"memory.recompute=none", "steps=1"}, {0});
  EXPECT_EQ(hardware(none), none.metadata.model_flops_per_step);
  Trace sel = Simulate("tiny-moe", {"memory.recompute=selective", "steps=1"}, {0});
  EXPECT_EQ(sel.metadata.model_flops_per_step, none.metadata.model_flops_per_step);
  // 4 layers x 32 micro-batches x 1,342,177,280.
  EXPECT_DOUBLE_EQ(hardware(sel) - sel.metadata.model_flops_per_step, 4.0 * 32 * 1342177280.0);
  // Full recompute re-runs the whole forward of every layer: one more
  // forward pass of the layers, the LM head excluded (3 passes in the model).
  Trace full = Simulate("tiny-moe", {"memory.recompute=full", "steps=1"}, {0});
  const ModelShape shape(BuildConfig({"tiny-moe", "", {}, 0}));
  double fwd = 0;
  for (int l = 0; l < 4; ++l) fwd += shape.LayerForwardFlops(l);
  EXPECT_DOUBLE_EQ(hardware(full) - full.metadata.model_flops_per_step, 32 * fwd);
  EXPECT_DOUBLE_EQ(shape.AttentionCoreFlops(), 1342177280.0);
}

}  // namespace
}  // namespace moetrace::tracegen
