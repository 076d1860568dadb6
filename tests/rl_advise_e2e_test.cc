// End-to-end: `moetrace advise` on a generated tiny-rl trace proposes the
// RL rules (analyzer/advise/rl_rules.h), predicted, in its JSON.
#include <gtest/gtest.h>

#include <string>

#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

TEST(RlAdviseE2e, AdviseOnTinyRlProposesTheRlRules) {
  const std::string dir = TempDir("rl_advise_e2e");
  const std::string in = dir + "/tiny-rl.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-rl -o " + in).exit_code, 0);
  CommandResult r = RunMoetrace("advise " + in + " --threads 2 --json " + dir + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("predicted: mean RL iteration 183.765 ms -> 126.753 ms (-31.0%), confidence 0.9"), std::string::npos) << r.output;
  const std::string json = ReadFile(dir + "/a.json");
  EXPECT_NE(json.find("\"rule\": \"rl_staleness\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"rule\": \"rl_rollout_layout\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"config\": [\"rl.staleness=1\"]"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"metric\": \"rl.long_tail_idle_share\", \"value\": "), std::string::npos) << json;
  EXPECT_EQ(json.find("\"rule\": \"layout\""), std::string::npos) << json;  // pre-training rules skipped
  // A tracegen trace carries its own model: another one is refused (exit 2).
  CommandResult bad = RunMoetrace("advise " + in + " --preset tiny-rl");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

}  // namespace
}  // namespace moetrace::testing
