#include "analyzer/advise/advise.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/advise/expert_placement.h"
#include "analyzer/analyze.h"
#include "analyzer/replay/replay.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::advise {
namespace {

// tiny-moe without its problems: adaptive overlap on 2 virtual stages and
// EDPB expert placement. Tests plant one problem on top.
const std::vector<std::string> kClean = {"schedule.kind=adaptive", "parallel.vpp=2",
                                         "routing.edpb=true"};

Trace AdviseTinyMoe(std::vector<std::string> sets) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

struct Advised {
  Trace trace;
  analysis::Analysis analysis;
  std::vector<Proposal> proposals;
};

Advised AdviseOn(std::vector<std::string> sets) {
  Advised a;
  a.trace = AdviseTinyMoe(sets);
  MemorySource s(a.trace);
  a.analysis = Analyze(s);
  // Each test here plants one problem and asks for its rule; tiny-moe's
  // layout is itself not the searched best (the layout change gains 23-32 %
  // on these runs and comes first), so the layout rule is left to
  // layout_rule_test.cc.
  AdviseOptions options;
  options.layout = false;
  a.proposals = Advise(a.trace, a.analysis, options);
  return a;
}

int64_t AdviseMedianStep(const Trace& t) {
  MemorySource s(t);
  return replay::MedianStepNs(Analyze(s));
}

// Applying the top proposal (generate with it) must gain at least 80% of
// what it predicted.
void ExpectTopGainRealised(const std::vector<std::string>& base, const Proposal& top) {
  std::vector<std::string> with = base;
  with.insert(with.end(), top.config.begin(), top.config.end());
  const int64_t before = AdviseMedianStep(AdviseTinyMoe(base));
  const int64_t after = AdviseMedianStep(AdviseTinyMoe(with));
  const double actual_gain = double(before - after) / double(before);
  EXPECT_GE(actual_gain, 0.8 * top.gain) << "predicted " << top.gain << " actual " << actual_gain;
}

TEST(ExpertPlacement, GreedyPackingMovesTheHotExperts) {
  // Two EP ranks of 4 experts; rank 0 holds the three hot experts.
  LayerPlan p = PlanLayer(3, {100, 60, 50, 10, 10, 10, 5, 5}, 2, {});
  EXPECT_EQ(p.layer, 3);
  // Loads: rank 0 = 220, rank 1 = 30; mean 125.
  EXPECT_DOUBLE_EQ(p.ep_max_vio_before, 220.0 / 125.0 - 1);
  // LPT: 100->0, 60->1, 50->1, 10->0, 10->1? (110 vs 110: stays where it was), ...
  EXPECT_EQ(p.placement, (std::vector<int32_t>{0, 1, 1, 0, 1, 0, 1, 0}));
  EXPECT_DOUBLE_EQ(p.ep_max_vio_after, 0.0);
  ASSERT_EQ(p.moves.size(), 4u);
  EXPECT_EQ(p.moves[0].expert, 1);
  EXPECT_EQ(p.moves[0].from_rank, 0);
  EXPECT_EQ(p.moves[0].to_rank, 1);
  EXPECT_EQ(p.moves[0].tokens, 60);
}

TEST(Advise, DefaultProblemFreeRunClaimsAtMostTwoPercent) {
  Advised a = AdviseOn(kClean);
  for (const Proposal& p : a.proposals) {
    EXPECT_LE(p.gain, 0.02) << p.rule << ": " << p.title;
  }
}

TEST(Advise, PlantedHostBoundTopIsMicroBatchOrTaskQueue) {
  std::vector<std::string> sets = kClean;
  sets.insert(sets.end(), {"host.task_queue=false", "host.numa_affinity=false", "model.seq_length=256"});
  Advised a = AdviseOn(sets);
  ASSERT_FALSE(a.proposals.empty());
  const Proposal& top = a.proposals[0];
  EXPECT_EQ(top.rule, "dispatch_host_bound");
  EXPECT_TRUE(top.predicted);
  EXPECT_GT(top.gain, 0.1);
  // Off-NUMA host costs are x3.65 (atlas-800t-a2's calibrated
  // cross_numa_factor, solved from ASCEND.md's stall 2.1 -> 0.6 ms), so the
  // binding is as likely the largest single fix as the task queue or MBS.
  EXPECT_TRUE(top.knob == "--micro-batch-size 2" || top.knob == "TASK_QUEUE_ENABLE=2" ||
              top.knob == "CPU_AFFINITY_CONF=1")
      << top.knob;
  bool task_queue = false;
  for (const Proposal& p : a.proposals) task_queue |= p.knob == "TASK_QUEUE_ENABLE=2";
  EXPECT_TRUE(task_queue);
  ExpectTopGainRealised(sets, top);
  // The task queue fix alone, applied, realises its prediction too.
  for (const Proposal& p : a.proposals) {
    if (p.knob == "TASK_QUEUE_ENABLE=2") ExpectTopGainRealised(sets, p);
  }
}

TEST(Advise, PlantedSkewProposesExpertPlacement) {
  std::vector<std::string> sets = {"schedule.kind=adaptive", "parallel.vpp=2", "routing.skew=1.0"};
  Advised a = AdviseOn(sets);
  ASSERT_FALSE(a.proposals.empty());
  // Migration alone leaves EP MaxVio at 0.48 here: replicating the hot
  // experts gains more and comes first (expert_replication_test.cc); the
  // migration is proposed too and realises its own gain.
  EXPECT_EQ(a.proposals[0].rule, "expert_replication");
  size_t k = 0;
  while (k < a.proposals.size() && a.proposals[k].rule != "expert_imbalance") ++k;
  ASSERT_LT(k, a.proposals.size());
  const Proposal& top = a.proposals[k];
  EXPECT_EQ(top.rule, "expert_imbalance");
  EXPECT_EQ(top.knob, "--enable-expert-placement --expert-placement-freq 1");
  EXPECT_EQ(top.config, std::vector<std::string>{"routing.edpb=true"});
  EXPECT_LT(top.fixes_after, top.fixes_before);
  EXPECT_NE(top.detail.find("layer 1: EP MaxVio"), std::string::npos) << top.detail;
  ExpectTopGainRealised(sets, top);
}

// The same planted skew in a trace without its tracegen configuration (as
// recorded): the proposal is replayed by the graph's expert-placement
// transform, not regenerated, and the gain it predicts is realised.
TEST(Advise, RecordedSkewReplaysThePlacementOnTheGraph) {
  std::vector<std::string> sets = {"schedule.kind=adaptive", "parallel.vpp=2", "routing.skew=1.0"};
  Advised a;
  a.trace = AdviseTinyMoe(sets);
  a.trace.metadata.config_json.clear();
  MemorySource s(a.trace);
  a.analysis = Analyze(s);
  std::vector<Proposal> dropped;
  AdviseOptions options;
  options.dropped = &dropped;
  a.proposals = Advise(a.trace, a.analysis, options);
  ASSERT_FALSE(a.proposals.empty()) << FormatDropped(dropped);
  const Proposal& top = a.proposals[0];
  EXPECT_EQ(top.rule, "expert_imbalance") << FormatProposals(a.proposals) << FormatDropped(dropped);
  EXPECT_EQ(top.replay, std::vector<std::string>{"routing.edpb=true"});
  EXPECT_TRUE(top.predicted);
  EXPECT_DOUBLE_EQ(top.confidence, 0.7);
  EXPECT_GT(top.gain, 0.0);
  ExpectTopGainRealised(sets, top);
}

TEST(Advise, PlantedMemoryPressureTopIsSelectiveRecompute) {
  // 750 MB of device memory: the 0.67 GiB peak leaves 4% headroom.
  Advised a = AdviseOn({"hardware.hbm_bytes=7.5e8"});
  ASSERT_FALSE(a.proposals.empty());
  const Proposal& top = a.proposals[0];
  EXPECT_EQ(top.rule, "memory_pressure");
  EXPECT_EQ(top.config, std::vector<std::string>{"memory.recompute=selective"});
  EXPECT_LT(double(top.peak_after_bytes), 0.9 * double(top.peak_before_bytes));
  // Swap saves almost nothing on tiny-moe: not proposed.
  for (const Proposal& p : a.proposals) EXPECT_NE(p.knob, "--swap-attention");
}

const Proposal* RuleOf(const std::vector<Proposal>& proposals, const std::string& rule) {
  for (const Proposal& p : proposals) {
    if (p.rule == rule) return &p;
  }
  return nullptr;
}

double ClusterBubble(const Trace& t) {
  MemorySource s(t);
  return Analyze(s).cluster().ratios().bubble();
}

// Interleaving on tiny-moe (p = 2, m = 4) shortens the step a little while
// the bubble metric rises (analyzer/replay/README.md, "The bubble rule"):
// the rule is judged by the slowest step and promises nothing of the bubble.
TEST(Advise, InterleavingIsJudgedByTheStepNotTheBubble) {
  const Advised a = AdviseOn({});
  const Proposal* p = RuleOf(a.proposals, "bubble");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->title, "interleaved pipeline with 2 virtual stages per rank");  // the step line says it
  EXPECT_EQ(p->fixes, "cluster.step_time_ns.max");
  // The two steps are `analyze`'s cluster.step_time_ns.max of tiny-moe and of
  // tiny-moe generated with the proposed keys (checked with the CLI, branch
  // launchmean: 13,948,664 and 13,678,089 ns; 13,859,078 and 13,646,139 with
  // the 10 us launch).
  EXPECT_EQ(p->fixes_before, 13948664);
  EXPECT_EQ(p->fixes_after, 13678089);  // -1.9 %
  ASSERT_EQ(p->evidence.size(), 3u);
  EXPECT_NEAR(p->evidence[0].value, 0.36479, 1e-5);  // cluster.ratios.bubble
  EXPECT_DOUBLE_EQ(p->evidence[1].value, 0.2);      // (p-1)/(m+p-1)
  EXPECT_DOUBLE_EQ(p->evidence[2].value, 1.0 / 9);  // (p-1)/(2m+p-1)
  EXPECT_EQ(p->detail,
            "PP 2 with 4 micro-batches a step: the fill and drain are 20.0 % of an ideal 1F1B step "
            "and 11.1 % with 2 virtual stages; the rest of the measured bubble (36.5 %) is stage "
            "imbalance and waits behind other collectives, which interleaving does not remove");
  // What made the old rule drop it: the measured bubble of the change rises.
  EXPECT_NEAR(ClusterBubble(AdviseTinyMoe({"schedule.kind=interleaved", "parallel.vpp=2"})), 0.39926, 1e-5);

  // With balanced stages (no LM head, no dense layer) it gains 8.3 %, and the
  // bubble metric still rises (30.35 % -> 30.57 %; 32.7 % -> 35.2 % with the
  // 10 us launch).
  const std::vector<std::string> balanced = {"model.vocab=1", "model.dense_layers=0"};
  const Advised b = AdviseOn(balanced);
  const Proposal* q = RuleOf(b.proposals, "bubble");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->fixes_before, 8595625);
  EXPECT_EQ(q->fixes_after, 7881481);
  EXPECT_NEAR(q->evidence[0].value, 0.30353, 1e-5);
  std::vector<std::string> interleaved = balanced;
  interleaved.insert(interleaved.end(), q->config.begin(), q->config.end());
  EXPECT_NEAR(ClusterBubble(AdviseTinyMoe(interleaved)), 0.30567, 1e-5);
}

TEST(Advise, NoEvidenceNoProposal) {
  // A run that is host-bound by nothing: the dispatch and sync rules stay silent.
  Advised a = AdviseOn(kClean);
  for (const Proposal& p : a.proposals) {
    EXPECT_NE(p.rule, "dispatch_host_bound");
    EXPECT_NE(p.rule, "expert_imbalance");
  }
}

TEST(Advise, JsonListsProposalsBestFirst) {
  std::vector<std::string> sets = kClean;
  sets.insert(sets.end(), {"host.task_queue=false", "host.numa_affinity=false", "model.seq_length=256"});
  Advised a = AdviseOn(sets);
  ASSERT_GE(a.proposals.size(), 2u);
  for (size_t i = 1; i < a.proposals.size(); ++i) {
    if (a.proposals[i].predicted) {
      EXPECT_GE(a.proposals[i - 1].gain, a.proposals[i].gain);
    }
  }
  const std::string json = ProposalsJson(a.proposals);
  EXPECT_EQ(json.rfind("{\n  \"proposals\": [", 0), 0u);
  EXPECT_NE(json.find("\"knob\": \"TASK_QUEUE_ENABLE=2\""), std::string::npos);
  EXPECT_NE(json.find("\"config\": [\"host.task_queue=true\"]"), std::string::npos);
}

}  // namespace
}  // namespace moetrace::advise
