// The analysis recovers tracegen's ground-truth labels (computed by the
// generator from what it simulated) within 0.5% of the step, on tiny-moe, on
// deepseek-v2-lite-16b, and on a sample of ranks of pangu-ultra-moe-718b
// with each knob of the generator on and off. The test compares the analyzer with the labels of the
// same trace, never with fixed numbers, so it holds while tracegen evolves.
//
// 718B at reduced cost (as bench/seed_table.cc): DP 4 instead of 48 (one EP
// group per pipeline stage; every device does the per-device work of the
// full job), 16 micro-batches per pipeline (a multiple of PP 16, even for
// DualPipe), one step (two where the knob acts between steps), ranks: the
// first of stage 0, one in the middle, the last of the last stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/stable_json.h"
#include "formats/trace_io.h"
#include "formats/trace_selection.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace {
namespace {

using tracegen::BuildConfig;
using tracegen::RunConfig;

struct Case {
  std::string name;
  std::string preset;
  std::vector<std::string> sets;
};

std::vector<std::string> Pangu(std::vector<std::string> sets, int steps = 1) {
  std::vector<std::string> all = {"parallel.dp=4", "parallel.world_size=512",
                                  "steps=" + std::to_string(steps)};
  all.insert(all.end(), sets.begin(), sets.end());
  RunConfig probe = BuildConfig({"pangu-ultra-moe-718b", "", all, 0});
  const int64_t micro = 16;
  all.push_back("parallel.global_batch_size=" +
                std::to_string(micro * probe.parallel().micro_batch_size() * probe.parallel().dp()));
  return all;
}

std::vector<Case> Cases() {
  std::vector<Case> c;
  c.push_back({"tiny_moe", "tiny-moe", {"steps=2"}});
  c.push_back({"tiny_moe_knobs_flipped", "tiny-moe",
               {"steps=2", "host.task_queue=false", "host.numa_affinity=false",
                "host.sync_before_a2a=true", "memory.recompute=full", "routing.edpb=true"}});
  // Redundant expert copies: their tokens count on the copies' EP ranks in
  // the labels and in the analysis alike (with EDPB: copies of the migrated layout).
  c.push_back({"tiny_moe_redundant_experts", "tiny-moe",
               {"steps=2", "routing.skew=2", "routing.redundant_experts=7"}});
  c.push_back({"tiny_moe_redundant_experts_edpb", "tiny-moe",
               {"steps=2", "routing.skew=2", "routing.redundant_experts=4", "routing.edpb=true"}});
  // EDPB's data and pipeline parts (issue #17): packed documents (attention
  // per DP rank), their re-arrangement, the balanced split and the MTP module.
  c.push_back({"tiny_moe_edpb_documents_mtp", "tiny-moe",
               {"steps=2", "data.doc_distribution=lognormal", "data.doc_mean=256", "data.doc_sigma=1",
                "model.mtp_layers=1", "model.mtp_modelled=true"}});
  c.push_back({"tiny_moe_edpb_all_parts", "tiny-moe",
               {"steps=2", "data.doc_distribution=lognormal", "data.doc_mean=256", "data.doc_sigma=1",
                "model.mtp_layers=1", "model.mtp_modelled=true", "routing.edpb=true",
                "parallel.balance_stages=true", "memory.swap=true"}});
  c.push_back({"tiny_moe_edpb_mixture", "tiny-moe",
               {"steps=2", "data.doc_distribution=mixture", "data.doc_mix=100:64,10:900,1:5000",
                "routing.edpb=true"}});
  // The mid-size preset whole (32 ranks, EP 1: no all-to-all, selective
  // recompute), and with experts spread over nodes (PP 2, EP 8 x TP 2 = 16
  // ranks on two nodes, hierarchical all-to-all).
  c.push_back({"deepseek_v2_lite_preset", "deepseek-v2-lite-16b", {}});
  c.push_back({"deepseek_v2_lite_ep16", "deepseek-v2-lite-16b",
               {"parallel.tp=2", "parallel.pp=2", "parallel.dp=8", "parallel.ep=8", "parallel.tp_extend_ep=true",
                "comm.a2a=hierarchical"}});
  const std::string p = "pangu-ultra-moe-718b";
  // The preset: MBS 2, interleaved VPP 2, hierarchical all-to-all, task
  // queue, NUMA binding, no token-count sync, skew 0.6, no EDPB, selective
  // recompute, swap. Each other case flips one knob.
  c.push_back({"pangu_preset", p, Pangu({})});
  c.push_back({"pangu_mbs1", p, Pangu({"parallel.micro_batch_size=1"})});
  c.push_back({"pangu_1f1b", p, Pangu({"schedule.kind=1f1b", "parallel.vpp=1"})});
  // MindSpeed's padding would leave DualPipe's last of 32 stages empty.
  c.push_back({"pangu_dualpipe", p, Pangu({"schedule.kind=dualpipe", "parallel.vpp=1", "parallel.noop_layers="})});
  c.push_back({"pangu_adaptive", p, Pangu({"schedule.kind=adaptive"})});
  c.push_back({"pangu_a2a_flat", p, Pangu({"comm.a2a=flat"})});
  c.push_back({"pangu_no_task_queue", p, Pangu({"host.task_queue=false"})});
  c.push_back({"pangu_no_numa_affinity", p, Pangu({"host.numa_affinity=false"})});
  c.push_back({"pangu_sync_before_a2a", p, Pangu({"host.sync_before_a2a=true"})});
  c.push_back({"pangu_skew0", p, Pangu({"routing.skew=0"})});
  c.push_back({"pangu_skew1", p, Pangu({"routing.skew=1"})});
  c.push_back({"pangu_redundant_experts", p, Pangu({"routing.redundant_experts=32"})});
  // EDPB migrates experts between steps: the second step uses it.
  c.push_back({"pangu_edpb", p, Pangu({"routing.edpb=true"}, 2)});
  c.push_back({"pangu_edpb_all_parts", p,
               Pangu({"routing.edpb=true", "parallel.balance_stages=true", "model.mtp_modelled=true",
                      "data.doc_distribution=mixture",
                      "data.doc_mix=3150:1432,83.8:9606,526:778,9.10:5582,95.5:1592,4.24:592"},
                     2)});
  c.push_back({"pangu_recompute_none", p, Pangu({"memory.recompute=none"})});
  c.push_back({"pangu_recompute_full", p, Pangu({"memory.recompute=full"})});
  c.push_back({"pangu_no_swap", p, Pangu({"memory.swap=false"})});
  return c;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class GroundTruth : public ::testing::TestWithParam<Case> {};

TEST_P(GroundTruth, EveryLabelWithinHalfAPercentOfTheStep) {
  const Case& k = GetParam();
  RunConfig config = BuildConfig({k.preset, "", k.sets, 0});
  std::vector<int32_t> ranks;
  if (k.preset != "tiny-moe") {
    const int per_stage = config.parallel().dp() * config.parallel().tp();
    const int stages = config.parallel().pp();
    ranks = {0, (stages / 2) * per_stage + per_stage / 2 + 3, stages * per_stage - 1};
  }
  MemorySink sink;
  tracegen::Generate(config, ranks, sink);
  const Metadata md = sink.trace().metadata;
  const size_t rank_count = sink.trace().ranks.size();
  MemorySource src(std::move(sink.trace()));
  AnalyzeOptions opt;
  opt.threads = 1;
  analysis::Analysis a = Analyze(src, opt);
  ASSERT_EQ(static_cast<size_t>(a.ranks_size()), rank_count);
  ASSERT_FALSE(md.ground_truth.empty());

  // Rank-level figures the issue names must all be checked, on every rank.
  const std::set<std::string> required = {
      "breakdown.span_ns", "breakdown.compute_ns", "breakdown.comm_exposed_ns",
      "breakdown.copy_exposed_ns", "breakdown.free_ns", "breakdown.host_bound_ns",
      "breakdown.host_bound_sync_ns", "breakdown.host_bound_dispatch_ns", "breakdown.bubble_ns",
      "comm_by_class.EP.exposed_ns", "comm_by_class.TP.exposed_ns", "comm_by_class.PP.exposed_ns",
      "comm_by_class.DP.exposed_ns", "comm_by_class.other.exposed_ns",
      "memory.peak_allocated_bytes", "expert_imbalance.max_vio", "expert_imbalance.ep_max_vio"};
  std::map<int32_t, std::set<std::string>> seen;
  int checked = 0;
  for (const analysis::LabelCheck& c : a.label_checks()) {
    if (c.source() != "ground_truth") continue;
    const std::string where = "rank " + std::to_string(c.rank()) + " step " +
                              (c.has_step() ? std::to_string(c.step()) : std::string("all")) +
                              " " + c.key() + ": expected " + std::to_string(c.expected()) +
                              " actual " + (c.has_actual() ? std::to_string(c.actual()) : "none");
    if (!c.has_actual()) {
      // Only per-step memory peaks have no per-step figure (the rank's peak is checked).
      EXPECT_TRUE(c.has_step() && c.key() == "memory.peak_allocated_bytes") << where;
      continue;
    }
    ++checked;
    if (!c.has_step()) seen[c.rank()].insert(c.key());
    if (c.has_error()) {
      EXPECT_LE(c.error(), 0.005) << where;
    } else {
      EXPECT_EQ(c.actual(), c.expected()) << where;  // no span / zero label
    }
  }
  EXPECT_GT(checked, 0);
  ASSERT_EQ(seen.size(), rank_count);
  // Expert figures exist on ranks that hold MoE layers (a stage of dense
  // layers only has none): required on some rank of the sample.
  int with_experts = 0;
  for (const auto& [rank, keys] : seen) {
    for (const std::string& key : required) {
      if (key.rfind("expert_imbalance.", 0) == 0) continue;
      EXPECT_TRUE(keys.count(key)) << "rank " << rank << " has no checked " << key;
    }
    with_experts += keys.count("expert_imbalance.max_vio") && keys.count("expert_imbalance.ep_max_vio");
  }
  EXPECT_GT(with_experts, 0);
}

// Worker threads add ranks to the cluster figures in any order: the
// document must not depend on it (collective waits tie on equal totals, and
// the members of a PP pair name their ops differently).
TEST(ClusterOrder, RanksAddedInReverseGiveTheSameDocument) {
  RunConfig config = BuildConfig({"tiny-moe", "", {"steps=2", "parallel.dp=16",
                                                   "parallel.world_size=32",
                                                   "parallel.global_batch_size=64"}, 0});
  MemorySink sink;
  tracegen::Generate(config, {}, sink);
  Trace forward = std::move(sink.trace());
  Trace reverse = forward;
  std::reverse(reverse.ranks.begin(), reverse.ranks.end());
  AnalyzeOptions opt;
  opt.threads = 1;  // ranks are added in source order
  MemorySource a(std::move(forward)), b(std::move(reverse));
  const std::string ja = ToStableJson(Analyze(a, opt));
  EXPECT_EQ(ja, ToStableJson(Analyze(b, opt)));
  EXPECT_NE(ja.find("\"collective_waits\": ["), std::string::npos);
}

// `analyze --steps S` gives each rank's step S as the whole trace does: the
// cut keeps the sync that ends as the step begins and each stream's bounds
// (trace_selection.h), so the host wait that starts in the step before is
// classified and clipped as in the whole trace, and the window ends where
// step S+1 begins. With the knobs off, tiny-moe's host waits start across
// the step boundary on every stream (loss read, then the dispatch of step
// S's first ops). One difference is known: the window's tail after S's last
// op is host-bound in the whole trace by the wait of S+1's first op, which
// the cut drops; there it is free, not host-bound (README, `analyze`).
TEST(StepSelection, EachStepAloneGivesTheWholeTracesStepFigures) {
  RunConfig config = BuildConfig({"tiny-moe", "", {"steps=3", "host.task_queue=false",
                                                   "host.numa_affinity=false", "host.sync_before_a2a=true"}, 0});
  MemorySink sink;
  tracegen::Generate(config, {}, sink);
  const Trace trace = std::move(sink.trace());
  AnalyzeOptions opt;
  opt.threads = 1;
  MemorySource whole_src{Trace(trace)};
  const analysis::Analysis whole = Analyze(whole_src, opt);
  int64_t sync_at_start = 0, launched_tails = 0;
  for (int32_t step = 0; step < 3; ++step) {
    TraceSelection sel;  // as analyze_files.cc applies `--steps`
    sel.steps = {step};
    const auto src = SelectFrom(std::make_unique<MemorySource>(Trace(trace)), sel);
    const analysis::Analysis one = Analyze(*src, opt);
    ASSERT_EQ(one.ranks_size(), whole.ranks_size());
    for (int i = 0; i < one.ranks_size(); ++i) {
      ASSERT_EQ(one.ranks(i).steps_size(), 1) << "rank " << i << " step " << step;
      const analysis::Breakdown& got = one.ranks(i).steps(0);
      const analysis::Breakdown* want = nullptr;
      for (const auto& b : whole.ranks(i).steps())
        if (b.step() == step) want = &b;
      ASSERT_NE(want, nullptr);
      EXPECT_EQ(got.SerializeAsString(), want->SerializeAsString())
          << "rank " << i << " step " << step << "\n" << got.DebugString() << "vs\n" << want->DebugString();
      if (step > 0) sync_at_start += want->host_bound_sync_ns();
    }
    // The tail after a middle step's last op: host-bound in the whole trace,
    // measured from the dropped next op's launch (Track::after_launch).
    if (step < 2) {
      for (const Track& r : src->ReadRank(0).tracks)
        if (r.kind == TrackKind::kDeviceStream && r.after_launch != INT64_MIN) ++launched_tails;
    }
    for (const analysis::LabelCheck& c : one.label_checks()) {
      if (c.has_error()) {
        EXPECT_LE(c.error(), 0.005) << c.key() << " rank " << c.rank() << " step " << step;
      }
    }
  }
  EXPECT_GT(sync_at_start, 0);  // the case this test is about occurs
  EXPECT_GT(launched_tails, 0);  // and so does the tail
}

INSTANTIATE_TEST_SUITE_P(Tracegen, GroundTruth, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace moetrace
