// analyze recovers every RL ground-truth label (rank -1, step = iteration)
// of a generated RL trace within 0.5% of the iteration, on tiny-rl and its
// variants: placement, staleness, algorithm, length distribution, iteration
// count. As analyzer/ground_truth_test.cc, it compares the analysis with the
// labels of the same trace, never with fixed numbers; what it pins is that
// every label is found and that the set of keys is complete.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "formats/trace_io.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace {
namespace {

struct Case {
  std::string name;
  std::vector<std::string> sets;
  // Phases every iteration must have (the labels' phases.<task> keys).
  std::vector<std::string> tasks;
};

const std::vector<std::string> kColocated = {"generate_sequences", "reshard_to_train", "compute_log_prob",
                                             "compute_ref_log_prob", "update_actor", "reshard_to_infer"};
const std::vector<std::string> kSeparate = {"generate_sequences", "compute_log_prob", "compute_ref_log_prob",
                                            "update_actor", "sync_weights"};

std::vector<Case> Cases() {
  std::vector<std::string> ppo = kColocated;
  ppo.insert(ppo.end(), {"compute_rm_score", "compute_values", "update_critic"});
  const std::vector<std::string> separate = {"rl.placement=separate", "rl.rollout.cards=8"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  return {
      {"preset", {}, kColocated},  // colocated, staleness 0, grpo, lognormal, 2 iterations
      {"fixed_lengths", {"rl.response_distribution=fixed"}, kColocated},
      {"three_iterations", {"rl.iterations=3"}, kColocated},
      {"colocated_stale1", {"rl.iterations=3", "rl.staleness=1"}, kColocated},
      {"ppo_reward_model", {"rl.algorithm=ppo", "rl.reward_model=true"}, ppo},
      {"separate", separate, kSeparate},
      {"separate_fixed", with(separate, {"rl.response_distribution=fixed"}), kSeparate},
      {"separate_stale1", with(separate, {"rl.iterations=3", "rl.staleness=1"}), kSeparate},
      {"separate_stale1_ppo_fixed",
       with(separate, {"rl.iterations=3", "rl.staleness=1", "rl.algorithm=ppo", "rl.response_distribution=fixed"}),
       {"generate_sequences", "compute_log_prob", "compute_ref_log_prob", "compute_values", "update_actor",
        "update_critic", "sync_weights"}},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RlGroundTruth : public ::testing::TestWithParam<Case> {};

TEST_P(RlGroundTruth, EveryLabelFoundAndWithinHalfAPercentOfTheIteration) {
  const Case& k = GetParam();
  const tracegen::RunConfig config = tracegen::BuildConfig({"tiny-rl", "", k.sets, 0});
  const int iterations = config.rl().iterations();
  MemorySink sink;
  tracegen::Generate(config, {}, sink);
  const Metadata md = sink.trace().metadata;
  MemorySource src(std::move(sink.trace()));
  AnalyzeOptions opt;
  opt.threads = 1;
  const analysis::Analysis a = Analyze(src, opt);
  ASSERT_TRUE(a.has_rl());
  ASSERT_EQ(a.rl().iterations_size(), iterations);

  int labels = 0;
  for (const LabeledValue& l : md.ground_truth) labels += l.rank == kNone;
  std::map<int, std::set<std::string>> seen;
  int checked = 0;
  for (const analysis::LabelCheck& c : a.label_checks()) {
    if (c.source() != "ground_truth" || c.rank() != kNone) continue;
    ++checked;
    const std::string where = "iteration " + std::to_string(c.step()) + " " + c.key() + ": expected " +
                              std::to_string(c.expected()) + " actual " +
                              (c.has_actual() ? std::to_string(c.actual()) : "none");
    ASSERT_TRUE(c.has_step()) << where;
    EXPECT_TRUE(c.has_actual()) << where;
    if (!c.has_actual()) continue;
    seen[c.step()].insert(c.key());
    if (c.has_error()) {
      EXPECT_LE(c.error(), 0.005) << where;
    } else {
      EXPECT_EQ(c.actual(), c.expected()) << where;  // a zero count
    }
  }
  EXPECT_EQ(checked, labels);
  // Every figure the issue names, in every iteration.
  std::vector<std::string> keys = {"start_ns",    "time_ns",          "busy_card_ns",   "long_tail_idle_card_ns",
                                   "switch_ns",   "generated_tokens", "trained_tokens", "staleness"};
  for (const std::string& t : k.tasks) {
    keys.push_back("phases." + t + ".time_ns");
    keys.push_back("phases." + t + ".card_ns");
  }
  ASSERT_EQ(static_cast<int>(seen.size()), iterations);
  for (const auto& [it, got] : seen) {
    for (const std::string& key : keys) EXPECT_TRUE(got.count(key)) << "iteration " << it << " " << key;
    EXPECT_EQ(got.size(), keys.size()) << "iteration " << it;
  }
  // The staleness in force reaches the configured bound somewhere (StaleSync
  // lets iteration i+1's rollout run while iteration i trains).
  if (config.rl().staleness() > 0 && config.rl().placement() == "separate") {
    EXPECT_EQ(a.rl().staleness(), config.rl().staleness());
  }
}

INSTANTIATE_TEST_SUITE_P(TinyRl, RlGroundTruth, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace moetrace
