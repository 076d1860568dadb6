// RL paths that the tiny-rl preset does not take (separate pools, PPO's
// critic, StaleSync on both placements, a reward model), each generated and
// analysed end to end: the phases present, no work outside its phase, and
// every RL label (rank -1) recovered. The label recovery over many variants
// is rl-bench's test; this one is about the paths. Also: nonsense `rl.*`
// values exit 2 naming the key, and report / gate read an RL analysis.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <set>
#include <string>
#include <vector>

#include "tests/run_command.h"

namespace moetrace {
namespace {

using testing::RunMoetrace;

struct Analysed {
  std::set<std::string> tasks;  // over every iteration
  int64_t iterations = 0, rl_labels = 0, rl_labels_off = 0;
  int64_t rank_labels = 0, rank_labels_off = 0;
  double worst_rl = 0;
  std::vector<int64_t> steps_per_rank;  // by rank
  bool outside_phase = false;
  std::string placement;
  int64_t staleness = -1;
};

// Generates tiny-rl with `sets`, analyses it, reads the JSON.
Analysed GenerateAndAnalyse(const std::string& name, const std::vector<std::string>& sets) {
  const std::string dir = testing::TempDir("rl_paths_" + name);
  std::string args = "generate --preset tiny-rl";
  for (const std::string& s : sets) args += " --set " + s;
  testing::CommandResult g = RunMoetrace(args + " -o " + dir + "/t.mtrace");
  EXPECT_EQ(g.exit_code, 0) << g.output;
  testing::CommandResult a = RunMoetrace("analyze " + dir + "/t.mtrace --json " + dir + "/a.json");
  EXPECT_EQ(a.exit_code, 0) << a.output;
  Analysed out;
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.load(dir + "/a.json");
  simdjson::dom::element rl = doc["rl"];
  out.placement = std::string(std::string_view(rl["placement"]));
  out.staleness = int64_t(rl["staleness"]);
  for (simdjson::dom::element it : rl["iterations"].get_array()) {
    ++out.iterations;
    for (simdjson::dom::element ph : it["phases"].get_array())
      out.tasks.insert(std::string(std::string_view(ph["task"])));
  }
  for (simdjson::dom::element c : doc["label_checks"].get_array()) {
    // A label the analysis has no figure for has no `actual` (a step's
    // memory peak); one whose expected value is 0 has no relative error.
    double actual = 0, expected = double(c["expected"]), err = 0;
    if (c["actual"].get(actual) != simdjson::SUCCESS) continue;
    if (c["error"].get(err) != simdjson::SUCCESS) err = actual == expected ? 0 : 1;
    if (int64_t(c["rank"]) == -1) {
      ++out.rl_labels;
      out.rl_labels_off += err > 0.005;
      out.worst_rl = std::max(out.worst_rl, err);
    } else {
      ++out.rank_labels;
      out.rank_labels_off += err > 0.005;
    }
  }
  for (simdjson::dom::element r : doc["ranks"].get_array()) {
    simdjson::dom::array steps;
    out.steps_per_rank.push_back(r["steps"].get(steps) == simdjson::SUCCESS ? int64_t(steps.size()) : 0);
  }
  // The emitter counts work placed outside its phase in the card's import
  // stats, which `info` sums over ranks (the file's attributes listed too).
  testing::CommandResult info = RunMoetrace("info " + dir + "/t.mtrace");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("rl.instance_cards"), std::string::npos) << info.output;
  out.outside_phase = info.output.find("tracegen.rl.outside_phase") != std::string::npos;
  return out;
}

const std::set<std::string> kGrpoColocated = {"generate_sequences", "reshard_to_train", "compute_log_prob",
                                              "compute_ref_log_prob", "update_actor", "reshard_to_infer"};

TEST(RlPaths, SeparatePools) {
  const Analysed a = GenerateAndAnalyse("separate", {"rl.placement=separate", "rl.rollout.cards=8"});
  EXPECT_EQ(a.placement, "separate");
  EXPECT_EQ(a.staleness, 0);
  EXPECT_EQ(a.iterations, 2);
  EXPECT_EQ(a.tasks, (std::set<std::string>{"generate_sequences", "compute_log_prob", "compute_ref_log_prob",
                                            "update_actor", "sync_weights"}));
  EXPECT_FALSE(a.outside_phase);
  EXPECT_GT(a.rl_labels, 0);
  EXPECT_EQ(a.rl_labels_off, 0) << "worst " << a.worst_rl;
  // The 16 training cards' step labels (rollout-only cards have none).
  EXPECT_GT(a.rank_labels, 0);
  EXPECT_EQ(a.rank_labels_off, 0);
  // Training cards 0-15: 2 iterations x 2 optimizer steps; the rollout pool
  // (16-23) ran no training step.
  std::vector<int64_t> want(16, 4);
  want.resize(24, 0);
  EXPECT_EQ(a.steps_per_rank, want);
}

TEST(RlPaths, PpoTrainsACritic) {
  const Analysed a = GenerateAndAnalyse("ppo", {"rl.algorithm=ppo"});
  std::set<std::string> want = kGrpoColocated;
  want.insert({"compute_values", "update_critic"});
  EXPECT_EQ(a.tasks, want);
  EXPECT_FALSE(a.outside_phase);
  EXPECT_GT(a.rl_labels, 0);
  EXPECT_EQ(a.rl_labels_off, 0) << "worst " << a.worst_rl;
  EXPECT_EQ(a.rank_labels_off, 0);
}

TEST(RlPaths, StaleSyncColocated) {
  const Analysed a = GenerateAndAnalyse("stale_colocated", {"rl.staleness=1"});
  EXPECT_EQ(a.placement, "colocated");
  EXPECT_EQ(a.tasks, kGrpoColocated);
  EXPECT_FALSE(a.outside_phase);
  EXPECT_GT(a.rl_labels, 0);
  EXPECT_EQ(a.rl_labels_off, 0) << "worst " << a.worst_rl;
  EXPECT_EQ(a.rank_labels_off, 0);
}

TEST(RlPaths, StaleSyncSeparate) {
  const Analysed a = GenerateAndAnalyse("stale_separate", {"rl.staleness=1", "rl.placement=separate", "rl.rollout.cards=8"});
  EXPECT_EQ(a.placement, "separate");
  // Iteration 1's rollout ran while iteration 0 trained.
  EXPECT_EQ(a.staleness, 1);
  EXPECT_EQ(a.tasks, (std::set<std::string>{"generate_sequences", "compute_log_prob", "compute_ref_log_prob",
                                            "update_actor", "sync_weights"}));
  EXPECT_FALSE(a.outside_phase);
  EXPECT_GT(a.rl_labels, 0);
  EXPECT_EQ(a.rl_labels_off, 0) << "worst " << a.worst_rl;
  EXPECT_EQ(a.rank_labels_off, 0);
}

TEST(RlPaths, RewardModelScores) {
  const Analysed a = GenerateAndAnalyse("reward", {"rl.reward_model=true"});
  std::set<std::string> want = kGrpoColocated;
  want.insert("compute_rm_score");
  EXPECT_EQ(a.tasks, want);
  EXPECT_FALSE(a.outside_phase);
  EXPECT_GT(a.rl_labels, 0);
  EXPECT_EQ(a.rl_labels_off, 0) << "worst " << a.worst_rl;
  EXPECT_EQ(a.rank_labels_off, 0);
}

// Nonsense values exit 2 and name the key (no crash, no hang).
TEST(RlPaths, NonsenseRlValuesExit2NamingTheKey) {
  const std::string dir = testing::TempDir("rl_paths_bad");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rl.prompts_per_iteration=0", "rl.prompts_per_iteration: must be >= 1 (got 0)"},
      {"rl.samples_per_prompt=-3", "rl.samples_per_prompt: must be >= 1 (got -3)"},
      {"rl.response_max=100", "rl.response_max: 100 is below rl.response_mean 256"},
      {"rl.iterations=2000000000", "rl.iterations: more than 1000 iterations"},
      {"rl.prompts_per_iteration=2000000000", "rl.prompts_per_iteration: more than 10,000,000 sequences"},
      {"rl.response_sigma=-1", "rl.response_sigma: must be >= 0 (got -1)"},
      {"rl.rollout.kv_memory_fraction=0.0000001", "rl.rollout.kv_memory_fraction: an attention-DP group's KV cache"},
      {"rl.rollout.cards=-16", "rl.rollout.cards: must be >= 0 (got -16)"},
      {"rl.staleness=2000000000", "rl.staleness: 2000000000 exceeds rl.iterations 2"},
      {"rl.response_sigma=nan", "rl.response_sigma: expected a number, got 'nan'"},
  };
  for (const auto& [set, message] : cases) {
    testing::CommandResult r = RunMoetrace("generate --preset tiny-rl --set " + set + " -o " + dir + "/x.mtrace");
    EXPECT_EQ(r.exit_code, 2) << set << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << set << ": " << r.output;
  }
}

// report renders the RL section; gate of an analysis against itself passes.
TEST(RlPaths, ReportAndGateReadAnRlAnalysis) {
  const std::string dir = testing::TempDir("rl_paths_report");
  ASSERT_EQ(RunMoetrace("generate --preset tiny-rl -o " + dir + "/t.mtrace").exit_code, 0);
  testing::CommandResult a = RunMoetrace("analyze " + dir + "/t.mtrace --json " + dir + "/a.json");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  testing::CommandResult rep = RunMoetrace("report " + dir + "/t.mtrace --md " + dir + "/r.md --html " + dir + "/r.html");
  EXPECT_EQ(rep.exit_code, 0) << rep.output;
  const std::string md = testing::ReadFile(dir + "/r.md");
  EXPECT_NE(md.find("generate_sequences"), std::string::npos) << md.substr(0, 2000);
  EXPECT_NE(testing::ReadFile(dir + "/r.html").find("generate_sequences"), std::string::npos);
  EXPECT_EQ(rep.output.find("error"), std::string::npos) << rep.output;
  testing::CommandResult gate = RunMoetrace("gate " + dir + "/a.json --baseline " + dir + "/a.json");
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
}

}  // namespace
}  // namespace moetrace
