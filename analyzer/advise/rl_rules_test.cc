#include "analyzer/advise/rl_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "analyzer/advise/rl_predict.h"
#include "analyzer/analyze.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::advise {
namespace {

// tiny-rl on separate pools: 8 rollout cards (two instances of 4) and 8
// training cards (PP 2 x DP 4, EP 4). The rollout takes 94 % of an
// iteration, so the training pool waits most of the time.
const std::vector<std::string> kSeparate = {"rl.placement=separate", "rl.rollout.cards=8",
                                            "parallel.world_size=8", "parallel.dp=4", "parallel.ep=4"};

tracegen::RunConfig Config(const std::vector<std::string>& sets) {
  return tracegen::BuildConfig({"tiny-rl", "", sets, 0});
}

Trace Generate(const tracegen::RunConfig& c) {
  MemorySink sink;
  tracegen::Generate(c, {}, sink, {}, 2);
  return std::move(sink.trace());
}

analysis::Analysis AnalyzeTrace(const Trace& t) {
  MemorySource s(t);
  return Analyze(s);
}

// The measured mean iteration of `base` with `config` applied: generated
// and analysed, as a user applying the proposal would see it.
int64_t Measured(const std::vector<std::string>& base, const std::vector<std::string>& config) {
  std::vector<std::string> sets = base;
  sets.insert(sets.end(), config.begin(), config.end());
  return MeanIterationNs(AnalyzeTrace(Generate(Config(sets))).rl());
}

struct RlAdvised {
  analysis::Analysis analysis;
  std::vector<Proposal> proposals, dropped;
};

RlAdvised RlAdviseOn(const std::vector<std::string>& sets) {
  RlAdvised a;
  const Trace t = Generate(Config(sets));
  a.analysis = AnalyzeTrace(t);
  AdviseOptions o;
  o.dropped = &a.dropped;
  o.threads = 2;
  a.proposals = Advise(t, a.analysis, o);
  return a;
}

const Proposal* Find(const std::vector<Proposal>& v, const std::string& rule) {
  for (const Proposal& p : v) {
    if (p.rule == rule) return &p;
  }
  return nullptr;
}

double RlEvidenceOf(const Proposal& p, const std::string& metric) {
  for (const Evidence& e : p.evidence) {
    if (e.metric == metric) return e.value;
  }
  ADD_FAILURE() << "no evidence " << metric << " in " << p.rule;
  return -1;
}

TEST(RlRules, PoolsOfSeparateTinyRl) {
  const analysis::Analysis a = AnalyzeTrace(Generate(Config(kSeparate)));
  const RlPools p = PoolsOf(a.rl());
  EXPECT_EQ(p.rollout_cards, 8);
  EXPECT_EQ(p.train_cards, 8);
  // Hand-checked against the phases: generate_sequences 216.139 and 191.045 ms.
  EXPECT_EQ(p.rollout_ns, (216138622 + 191044993) / 2);
  EXPECT_EQ(MeanIterationNs(a.rl()), (229409649 + 204284266) / 2);
}

// Separate pools, the training pool idle 9/10 of the time: colocate on the
// same 16 cards, the training layout's DP grown to all of them.
TEST(RlRules, ColocationFiresOnSeparatePoolsAndItsGainIsTheRegeneratedOne) {
  const RlAdvised a = RlAdviseOn(kSeparate);
  const Proposal* p = Find(a.proposals, "rl_colocation");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->config, (std::vector<std::string>{"rl.placement=colocated", "parallel.world_size=16", "parallel.dp=8"}));
  EXPECT_DOUBLE_EQ(RlEvidenceOf(*p, "rl.utilization"), a.analysis.rl().utilization());
  EXPECT_NEAR(a.analysis.rl().utilization(), 0.4230, 1e-4);
  ASSERT_TRUE(p->predicted);
  EXPECT_EQ(p->step_before_ns, MeanIterationNs(a.analysis.rl()));
  EXPECT_EQ(p->step_after_ns, Measured(kSeparate, p->config));
  EXPECT_EQ(p->step_before_ns, 216846957);
  EXPECT_EQ(p->step_after_ns, 183651113);  // -15.3 %
  EXPECT_DOUBLE_EQ(p->gain, double(p->step_before_ns - p->step_after_ns) / double(p->step_before_ns));
}

// Synchronous tiny-rl: 29 % of the card-time idles in the long tail.
TEST(RlRules, StalenessFiresOnTheLongTailAndItsGainIsTheRegeneratedOne) {
  const RlAdvised a = RlAdviseOn({});
  const Proposal* p = Find(a.proposals, "rl_staleness");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->config, (std::vector<std::string>{"rl.staleness=1"}));
  EXPECT_NEAR(RlEvidenceOf(*p, "rl.long_tail_idle_share"), 0.2945, 1e-4);
  ASSERT_TRUE(p->predicted);
  EXPECT_EQ(p->step_before_ns, MeanIterationNs(a.analysis.rl()));
  EXPECT_EQ(p->step_after_ns, Measured({}, p->config));
  EXPECT_EQ(p->step_before_ns, 183764675);
  EXPECT_EQ(p->step_after_ns, 126753177);  // -31.0 %
}

// Separate pools with the rollout 17x the training side: cards move to the
// rollout pool; the split kept is the best regenerated.
TEST(RlRules, CardSplitMovesCardsToTheSlowSideAndItsGainIsTheRegeneratedOne) {
  const RlAdvised a = RlAdviseOn(kSeparate);
  const Proposal* p = Find(a.proposals, "rl_card_split");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->predicted);
  // Balance point 15.07 rollout cards; 12 + 4 is the nearest feasible
  // split (instances of 4, training replicas of PP 2, EP down to DP 2).
  EXPECT_NEAR(RlEvidenceOf(*p, "rollout cards at the balance point, cards x rollout card-time share"), 15.07, 0.01);
  EXPECT_EQ(p->config, (std::vector<std::string>{"rl.rollout.cards=12", "parallel.world_size=4", "parallel.dp=2",
                                                 "parallel.ep=2"}));
  EXPECT_EQ(p->step_after_ns, 206339664);  // -4.8 %
  EXPECT_EQ(p->step_before_ns, MeanIterationNs(a.analysis.rl()));
  EXPECT_EQ(p->step_after_ns, Measured(kSeparate, p->config));
}

// The rollout is 95 % of tiny-rl's iteration: a layout / batch search.
TEST(RlRules, RolloutLayoutSearchKeepsTheBestRegenerated) {
  const RlAdvised a = RlAdviseOn({});
  const Proposal* p = Find(a.proposals, "rl_rollout_layout");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->predicted);
  EXPECT_NEAR(RlEvidenceOf(*p, "rl.iterations[].phases[generate_sequences].share (mean)"), 0.95, 0.01);
  EXPECT_EQ(p->step_before_ns, MeanIterationNs(a.analysis.rl()));
  EXPECT_EQ(p->step_after_ns, Measured({}, p->config));
  // Of 7 candidates (tp/dp swaps, instance x2 / /2, EP, max_batch x2 x4 /2)
  // EP 4 -> 2 is the best: 183.765 -> 137.246 ms.
  EXPECT_EQ(p->config, (std::vector<std::string>{"rl.rollout.ep=2"}));
  EXPECT_EQ(p->step_after_ns, 137246240);
  // The pre-training rules are not run on an RL trace.
  for (const Proposal& q : a.proposals) EXPECT_EQ(q.rule.rfind("rl_", 0), 0u) << q.rule;
  for (const Proposal& q : a.dropped) EXPECT_EQ(q.rule.rfind("rl_", 0), 0u) << q.rule;
}

// No evidence, no rule: colocated (no pools to merge or split), staleness
// already 1, fixed response lengths (no long tail).
TEST(RlRules, SilentWithoutTheirEvidence) {
  const RlAdvised colocated = RlAdviseOn({});
  EXPECT_EQ(Find(colocated.proposals, "rl_colocation"), nullptr);
  EXPECT_EQ(Find(colocated.proposals, "rl_card_split"), nullptr);
  EXPECT_EQ(Find(colocated.dropped, "rl_colocation"), nullptr);
  const RlAdvised stale = RlAdviseOn({"rl.staleness=1"});
  EXPECT_EQ(Find(stale.proposals, "rl_staleness"), nullptr);
  EXPECT_EQ(Find(stale.dropped, "rl_staleness"), nullptr);
  const RlAdvised fixed = RlAdviseOn({"rl.response_distribution=fixed", "rl.response_sigma=0"});
  EXPECT_EQ(fixed.analysis.rl().long_tail_idle_share(), 0);
  EXPECT_EQ(Find(fixed.proposals, "rl_staleness"), nullptr);
  EXPECT_EQ(Find(fixed.dropped, "rl_staleness"), nullptr);
}

// A recorded trace (no RunConfig): the rules say what they see, without a
// prediction; with the model given (--config / --preset) they predict.
TEST(RlRules, RecordedTraceEvidenceOnlyUnlessTheModelIsGiven) {
  Trace t = Generate(Config(kSeparate));
  t.metadata.config_json.clear();
  const analysis::Analysis a = AnalyzeTrace(t);
  const std::vector<Proposal> seen = Advise(t, a, {});
  ASSERT_NE(Find(seen, "rl_colocation"), nullptr);
  for (const Proposal& p : seen) EXPECT_FALSE(p.predicted) << p.rule;
  EXPECT_NE(Find(seen, "rl_colocation")->title.find("(effect not predicted)"), std::string::npos);
  const Proposal* split = Find(seen, "rl_card_split");
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(split->config.empty());
  EXPECT_EQ(split->detail.rfind("balance point: about 15 of the 16 cards rolling out", 0), 0u) << split->detail;
  const tracegen::RunConfig model = Config(kSeparate);
  AdviseOptions o;
  o.model = &model;
  const std::vector<Proposal> predicted = Advise(t, a, o);
  const Proposal* p = Find(predicted, "rl_colocation");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->predicted);
  EXPECT_EQ(p->step_after_ns, Measured(kSeparate, p->config));
  // A model of another size cannot be this job.
  const tracegen::RunConfig other = Config({});
  AdviseOptions bad;
  bad.model = &other;
  t.metadata.config_json.clear();
  EXPECT_NO_THROW(Advise(t, a, bad));  // 16 cards both
  const tracegen::RunConfig small = Config({"parallel.world_size=8", "parallel.dp=4", "parallel.ep=4",
                                            "rl.rollout.dp=4"});
  bad.model = &small;
  EXPECT_THROW(Advise(t, a, bad), InputError);
}

}  // namespace
}  // namespace moetrace::advise
