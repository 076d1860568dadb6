#include "analyzer/advise/expert_replication.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "analyzer/analyze.h"
#include "analyzer/replay/replay.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::advise {
namespace {

RoutingRecord Record(int32_t layer, std::vector<int64_t> tokens, int32_t ep) {
  RoutingRecord r;
  r.step = 0;
  r.micro_batch = 0;
  r.layer = layer;
  r.ep_size = ep;
  r.tokens_per_expert = std::move(tokens);
  return r;
}

TEST(PlanReplication, OneDominantExpertGetsCopiesMigrationCannotBalance) {
  // 4 EP ranks of 2 experts; expert 0 has 400 of 560 tokens (fair share 140).
  const RoutingRecord r = Record(1, {400, 20, 30, 30, 10, 10, 20, 40}, 4);
  const std::optional<ReplicationPlan> plan = PlanReplication({&r}, 0.15);
  ASSERT_TRUE(plan);
  // Rank loads {420, 60, 20, 60}: 420 / 140 - 1.
  EXPECT_DOUBLE_EQ(plan->ep_max_vio_before, 2.0);
  // Migration keeps 2 experts a rank: expert 0 and the lightest (10) share one.
  EXPECT_DOUBLE_EQ(plan->ep_max_vio_migrated, 410.0 / 140 - 1);
  // 1, 2, 3, 4 copies: 0.571, 0.381, 0.143, 0.143 -> the fewest within 0.02 of the best: 3,
  // shares of 100 on ranks {0, 2, 1, 3}: loads {120, 160, 120, 160}.
  EXPECT_EQ(plan->copies, 3);
  EXPECT_DOUBLE_EQ(plan->ep_max_vio_after, 160.0 / 140 - 1);
  ASSERT_EQ(plan->layers.size(), 1u);
  EXPECT_EQ(plan->layers[0].layer, 1);
  EXPECT_EQ(plan->layers[0].expert, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(plan->layers[0].ep_rank, (std::vector<int32_t>{2, 1, 3}));
  EXPECT_EQ(ReplicationText(*plan),
            "EPLB replication on the measured loads: 3 copies per MoE layer, mean EP MaxVio 2.00 -> 0.14 "
            "(migration alone: 1.93)\n"
            "layer 1: EP MaxVio 2.00 -> 0.14: e0 copy on EP rank 2, e0 copy on EP rank 1, e0 copy on EP rank 3\n");
}

TEST(PlanReplication, NoPlanWhenNoExpertOutweighsARanksShare) {
  // Expert 0 (50) is under the fair share (240 / 4 = 60): migration's job.
  const RoutingRecord r = Record(1, {50, 40, 30, 30, 20, 10, 20, 40}, 4);
  EXPECT_FALSE(PlanReplication({&r}, 0.15));
  // A dominant expert the records already copy as often as there are ranks: nothing more.
  RoutingRecord copied = Record(1, {400, 20, 30, 30, 10, 10, 20, 40}, 4);
  copied.copy_expert = {0, 0, 0, 7};
  copied.copy_ep_rank = {2, 1, 3, 0};
  copied.copy_tokens = {100, 100, 100, 20};
  EXPECT_FALSE(PlanReplication({&copied}, 0.15));
}

Trace TinyMoe(const std::vector<std::string>& sets) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

// The case: tiny-moe with routing.skew=2, where one expert of
// layer 1 outweighs its EP rank's share and "migrate hot experts" used to
// move 7 experts for EP MaxVio 1.47 -> 1.47.
TEST(Advise, DominantExpertTopExpertProposalIsReplicationAndRegeneratingRealisesIt) {
  const std::vector<std::string> sets = {"routing.skew=2"};
  const Trace trace = TinyMoe(sets);
  MemorySource s(trace);
  const analysis::Analysis a = Analyze(s);
  const std::vector<Proposal> proposals = Advise(trace, a);
  const Proposal* top = nullptr;
  for (const Proposal& p : proposals) {
    // No migration plan that leaves its own metric where it was.
    if (p.rule == "expert_imbalance") EXPECT_LT(p.fixes_after, p.fixes_before) << p.detail;
    if (!top && (p.rule == "expert_imbalance" || p.rule == "expert_replication")) top = &p;
  }
  ASSERT_TRUE(top);
  EXPECT_EQ(top->rule, "expert_replication");
  EXPECT_EQ(top->config, std::vector<std::string>{"routing.redundant_experts=7"});
  ASSERT_TRUE(top->predicted);
  EXPECT_NE(top->detail.find("layer 1: EP MaxVio"), std::string::npos) << top->detail;
  double planned = -1;
  for (const Evidence& e : top->evidence) {
    if (e.metric == "planned EP MaxVio with the copies") planned = e.value;
  }
  ASSERT_GE(planned, 0);

  // Regenerated with the change: the step gains >= 80% of the prediction,
  // and EP MaxVio falls by >= 80% of what the plan (on the measured loads) said.
  std::vector<std::string> with = sets;
  with.insert(with.end(), top->config.begin(), top->config.end());
  const Trace after = TinyMoe(with);
  MemorySource sa(after);
  const analysis::Analysis aa = Analyze(sa);
  const int64_t step_before = replay::MedianStepNs(a), step_after = replay::MedianStepNs(aa);
  const double gain = double(step_before - step_after) / double(step_before);
  EXPECT_GE(gain, 0.8 * top->gain) << "predicted " << top->gain << " actual " << gain;
  const double vio_before = a.cluster().expert_imbalance().ep_max_vio_mean();
  const double vio_after = aa.cluster().expert_imbalance().ep_max_vio_mean();
  EXPECT_GE(vio_before - vio_after, 0.8 * (vio_before - planned))
      << "planned " << planned << " regenerated " << vio_after;
}

}  // namespace
}  // namespace moetrace::advise
