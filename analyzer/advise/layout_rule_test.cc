#include "analyzer/advise/layout_rule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/replay/replay.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::advise {
namespace {

tracegen::RunConfig TinyMoeConfig(const std::vector<std::string>& sets) {
  return tracegen::BuildConfig({"tiny-moe", "", sets, 0});
}

Trace LayoutTinyMoe(const std::vector<std::string>& sets) {
  MemorySink sink;
  tracegen::Generate(TinyMoeConfig(sets), {}, sink);
  return std::move(sink.trace());
}

int64_t MedianStep(const Trace& t) {
  MemorySource s(t);
  return replay::MedianStepNs(Analyze(s));
}

struct LayoutAdvised {
  std::vector<Proposal> proposals, dropped;
  std::string text;  // for failure messages
};

LayoutAdvised LayoutAdviseOn(const std::vector<std::string>& sets, bool replay = true) {
  const Trace t = LayoutTinyMoe(sets);
  MemorySource s(t);
  const analysis::Analysis a = Analyze(s);
  LayoutAdvised out;
  AdviseOptions o;
  o.replay = replay;
  o.dropped = &out.dropped;
  out.proposals = Advise(t, a, o);
  out.text = FormatProposals(out.proposals) + FormatDropped(out.dropped);
  return out;
}

// Regenerating with the proposal's keys (the whole run, every step, as a
// user would) realises >= 80% of the predicted gain.
void ExpectGainRealised(const std::vector<std::string>& sets, const Proposal& p) {
  std::vector<std::string> with = sets;
  with.insert(with.end(), p.config.begin(), p.config.end());
  const int64_t before = MedianStep(LayoutTinyMoe(sets));
  const int64_t after = MedianStep(LayoutTinyMoe(with));
  const double actual = double(before - after) / double(before);
  EXPECT_GE(actual, 0.8 * p.gain) << "predicted " << p.gain << " actual " << actual;
}

double LayoutEvidenceOf(const Proposal& p, const std::string& metric) {
  for (const Evidence& e : p.evidence)
    if (e.metric == metric) return e.value;
  return -1;
}

// tiny-moe as its preset lays it out (TP 1, PP 2, EP 8, DP 8, MBS 1, 1F1B)
// ranks 535th of the 10,968 layouts of 16 cards (499th before the swapping
// layouts' backward waited at the first op reading a swapped tensor, branch
// swapmbs1): the whole layout changes, and that change is the top proposal.
TEST(LayoutRule, PresetLayoutGetsTheSearchedBestAsTopProposal) {
  const std::vector<std::string> sets = {"parallel.ep=8"};
  const LayoutAdvised a = LayoutAdviseOn(sets);
  ASSERT_FALSE(a.proposals.empty());
  const Proposal& top = a.proposals[0];
  ASSERT_EQ(top.rule, "layout") << a.text;
  EXPECT_EQ(top.config, (std::vector<std::string>{"parallel.tp=2", "parallel.dp=4", "parallel.ep=2",
                                                  "parallel.tp_extend_ep=true",
                                                  "parallel.micro_batch_size=4",
                                                  "schedule.kind=dualpipe"}));
  EXPECT_EQ(top.knob,
            "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
            "--expert-model-parallel-size 2 --moe-tp-extend-ep --micro-batch-size 4 "
            "--schedules-method dualpipev");
  EXPECT_EQ(LayoutEvidenceOf(top, "search.configured_rank"), 535);
  EXPECT_EQ(LayoutEvidenceOf(top, "search.feasible_layouts"), 5640);
  EXPECT_TRUE(top.predicted);
  // The configured layout and the best, one step simulated: `analyze`'s
  // cluster.step_time_ns.max of each generated with steps=1 (13,882,691 and
  // 9,444,460 ns) + the step's first issue, which the simulation's step
  // includes (framework 12 + enqueue 2.5 + launch 18.46 us = 32,960 ns).
  EXPECT_EQ(top.step_before_ns, 13915651);
  EXPECT_EQ(top.step_after_ns, 9477420);
  EXPECT_DOUBLE_EQ(top.confidence, 0.9);
  EXPECT_EQ(top.title,
            "change the layout to TP 2 PP 2 EP 2 (x TP: 4) DP 4 MBS 4 dualpipe flat recompute-none "
            "(searched on 16 cards: the configured one ranks 535 of the 5640 that fit)");
  ExpectGainRealised(sets, top);
}

// The planted EP: tiny-moe at its searched best but with EP 4 across TP
// (8 expert groups) instead of 2: only EP changes back.
TEST(LayoutRule, PlantedExpertParallelismIsChangedBack) {
  const std::vector<std::string> sets = {"parallel.tp=2", "parallel.dp=4", "parallel.ep=4",
                                         "parallel.tp_extend_ep=true", "parallel.micro_batch_size=4",
                                         "schedule.kind=dualpipe"};
  const LayoutAdvised a = LayoutAdviseOn(sets);
  ASSERT_FALSE(a.proposals.empty());
  const Proposal& top = a.proposals[0];
  ASSERT_EQ(top.rule, "layout") << a.text;
  EXPECT_EQ(top.config, std::vector<std::string>{"parallel.ep=2"});
  EXPECT_EQ(LayoutEvidenceOf(top, "search.configured_rank"), 17);
  EXPECT_EQ(top.step_before_ns, 9726465);  // 9,693,505 (analyze, steps=1) + 32,960
  EXPECT_EQ(top.step_after_ns, 9477420);  // the same best as from the preset's layout
  ExpectGainRealised(sets, top);
}

// At the searched best, nothing to propose (and nothing simulated).
TEST(LayoutRule, BestLayoutProposesNothing) {
  const tracegen::RunConfig c =
      TinyMoeConfig({"parallel.tp=2", "parallel.dp=4", "parallel.ep=2", "parallel.tp_extend_ep=true",
                     "parallel.micro_batch_size=4", "schedule.kind=dualpipe"});
  EXPECT_FALSE(LayoutProposal(c, true).has_value());
}

// advise --no-replay: the best estimate, not predicted.
TEST(LayoutRule, WithoutReplayTheBestEstimateIsUnpredicted) {
  const std::optional<Proposal> p = LayoutProposal(TinyMoeConfig({}), false);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->predicted);
  EXPECT_EQ(p->config.size(), 6u);
  EXPECT_EQ(p->config[2], "parallel.ep=2");
  EXPECT_NE(p->detail.find("best estimate 9.421 ms (not simulated)"), std::string::npos) << p->detail;
}

// tiny-moe padded to 6 layers for its PP 2 (1F1B): the best estimate is a
// DualPipe layout, on which ApplyLayout drops the padding, so the config
// line clears it (else a replay keeps "4,5" on the new layout) and the
// MindSpeed line says to drop --noop-layers; the list replays.
TEST(LayoutRule, DroppedNoopPaddingIsInTheConfigAndTheKnobs) {
  const std::vector<std::string> sets = {"parallel.noop_layers=4,5"};
  const std::optional<Proposal> p = LayoutProposal(TinyMoeConfig(sets), false);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->config, (std::vector<std::string>{"parallel.tp=2", "parallel.dp=4", "parallel.ep=2",
                                                 "parallel.tp_extend_ep=true", "parallel.micro_batch_size=4",
                                                 "parallel.noop_layers=", "schedule.kind=dualpipe"}));
  EXPECT_EQ(p->knob,
            "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --expert-model-parallel-size 2 "
            "--moe-tp-extend-ep --micro-batch-size 4 --schedules-method dualpipev (drop --noop-layers: its "
            "padding is for the configured stages)");
  std::vector<std::string> replayed = sets;
  replayed.insert(replayed.end(), p->config.begin(), p->config.end());
  EXPECT_EQ(TinyMoeConfig(replayed).parallel().noop_layers(), "");
}

// A configuration the search cannot take is not fatal to advise: the rule
// says why it proposes nothing.
TEST(LayoutRule, UnsearchableConfigurationIsNotProposedWithTheReason) {
  tracegen::RunConfig c = TinyMoeConfig({});
  c.mutable_hardware()->set_preset("no-such-npu");
  const std::optional<Proposal> p = LayoutProposal(c, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->predicted);
  EXPECT_EQ(p->not_proposed.rfind("no layout search on this configuration: ", 0), 0u) << p->not_proposed;
  EXPECT_NE(p->not_proposed.find("no-such-npu"), std::string::npos) << p->not_proposed;
}

}  // namespace
}  // namespace moetrace::advise
