// End-to-end: `moetrace replay` and `moetrace advise` on a generated run.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

TEST(ReplayAdviseE2e, ReplayWritesJsonAndTrace) {
  const std::string dir = TempDir("replay_e2e");
  const std::string in = dir + "/tiny.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe -o " + in).exit_code, 0);
  CommandResult r = RunMoetrace("replay " + in + " --set speed.flash_attention=1.5 --json " + dir +
                                "/p.json -o " + dir + "/p.mtrace");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("graph replay"), std::string::npos) << r.output;
  const std::string json = ReadFile(dir + "/p.json");
  EXPECT_NE(json.find("\"step_time_ns\": {\"after\": "), std::string::npos);
  EXPECT_NE(json.find("\"modifications\": [\"speed.flash_attention=1.5\"]"), std::string::npos);
  EXPECT_EQ(RunMoetrace("info " + dir + "/p.mtrace").exit_code, 0);
  // A RunConfig key regenerates the run.
  CommandResult g = RunMoetrace("replay " + in + " --set host.task_queue=false");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  EXPECT_NE(g.output.find("regenerated with tracegen"), std::string::npos) << g.output;
}

// --method graph: the RunConfig knob as a transform of the recorded events,
// never regenerated; a knob the graph does not model is an input error.
TEST(ReplayAdviseE2e, GraphMethodTransformsTheEvents) {
  const std::string dir = TempDir("replay_graph");
  const std::string in = dir + "/tiny.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe --set model.seq_length=512 -o " + in).exit_code, 0);
  CommandResult r = RunMoetrace("replay " + in + " --method graph --set parallel.micro_batch_size=2 --json " +
                                dir + "/g.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("replay: graph replay\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("transform: micro-batch x2: 4 -> 2 micro-batches"), std::string::npos) << r.output;
  const std::string json = ReadFile(dir + "/g.json");
  EXPECT_NE(json.find("\"regenerated\": false"), std::string::npos);
  CommandResult bad = RunMoetrace("replay " + in + " --method graph --set model.hidden=2048");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("not modelled by the graph replay"), std::string::npos) << bad.output;
  // The schedule is modelled when the layer split stays; another vpp is refused.
  CommandResult s = RunMoetrace("replay " + in + " --method graph --set schedule.kind=adaptive");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_NE(s.output.find("transform: schedule.kind=adaptive: 1f1b -> adaptive"), std::string::npos) << s.output;
  CommandResult vpp = RunMoetrace("replay " + in +
                                  " --method graph --set schedule.kind=adaptive --set parallel.vpp=2");
  EXPECT_EQ(vpp.exit_code, 2);
  EXPECT_NE(vpp.output.find("the trace has vpp 1"), std::string::npos) << vpp.output;
}

TEST(ReplayAdviseE2e, BadSetExitsTwoNamingTheKey) {
  const std::string dir = TempDir("replay_bad");
  const std::string in = dir + "/tiny.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe -o " + in).exit_code, 0);
  CommandResult r = RunMoetrace("replay " + in + " --set speed.warp=2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("speed.warp=2"), std::string::npos) << r.output;
  // Refused before the input is read: a missing file is not what it reports.
  r = RunMoetrace("replay " + dir + "/missing.mtrace --set speed.warp=2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("speed.warp=2"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("missing.mtrace"), std::string::npos) << r.output;
}

TEST(ReplayAdviseE2e, AdviseListsTheHostFixFirst) {
  const std::string dir = TempDir("advise_e2e");
  const std::string in = dir + "/host.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe --set schedule.kind=adaptive --set parallel.vpp=2 "
                        "--set routing.edpb=true --set host.task_queue=false --set "
                        "host.numa_affinity=false --set model.seq_length=256 -o " + in)
                .exit_code,
            0);
  // --no-layout: the layout change (MBS 4 DualPipe, layout_rule_test.cc)
  // would come first on tiny-moe; this test is about the host rules.
  CommandResult r = RunMoetrace("advise " + in + " --no-layout --json " + dir + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("1. ", 0), 0u) << r.output;
  const std::string json = ReadFile(dir + "/a.json");
  const size_t first = json.find("\"rule\": ");
  ASSERT_NE(first, std::string::npos);
  const std::string want = "\"rule\": \"dispatch_host_bound\"";
  EXPECT_EQ(json.substr(first, want.size()), want);
}

TEST(ReplayAdviseE2e, AdviseProposesTheSearchedLayoutFirst) {
  const std::string dir = TempDir("advise_layout_e2e");
  const std::string in = dir + "/tiny.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe -o " + in).exit_code, 0);
  CommandResult r = RunMoetrace("advise " + in + " --json " + dir + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("1. change the layout to TP 2 PP 2 EP 2 (x TP: 4) DP 4 MBS 4 dualpipe", 0), 0u)
      << r.output;
  EXPECT_NE(r.output.find("   knob: --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                          "--expert-model-parallel-size 2 --moe-tp-extend-ep --micro-batch-size 4 "
                          "--schedules-method dualpipev\n"),
            std::string::npos)
      << r.output;
  const std::string json = ReadFile(dir + "/a.json");
  EXPECT_NE(json.find("\"rule\": \"layout\""), std::string::npos);
  CommandResult off = RunMoetrace("advise " + in + " --no-layout");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(off.output.find("change the layout"), std::string::npos) << off.output;
}

// A recorded trace (tiny-moe converted to a Kineto set: world size kept,
// configuration dropped) gets the layout proposal from the model the user
// gives, said to be model-based; a model of another job, or a model for a
// trace that has its own, is exit 2.
TEST(ReplayAdviseE2e, AdviseRecordedTraceWithTheUsersModel) {
  const std::string dir = TempDir("advise_recorded_e2e");
  const std::string in = dir + "/tiny.mtrace";
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe -o " + in).exit_code, 0);
  ASSERT_EQ(RunMoetrace("convert " + in + " -o " + dir + "/kineto/").exit_code, 0);
  CommandResult none = RunMoetrace("advise " + dir + "/kineto");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_EQ(none.output.find("change the layout"), std::string::npos) << none.output;
  CommandResult r = RunMoetrace("advise " + dir + "/kineto --preset tiny-moe");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("1. change the layout to TP 2 PP 2 EP 2 (x TP: 4) DP 4 MBS 4 dualpipe flat "
                           "recompute-none (model-based, searched on 16 cards",
                           0),
            0u)
      << r.output;
  // RecordedModel.TinyMoeConvertedToKinetoGetsTheTracegenLayout's figures:
  // 13,948,664 x 9,477,420 / 13,915,651 = 9,499,904 ns.
  EXPECT_NE(r.output.find("   predicted: step 13.949 -> 9.500 ms (-31.9%), slowest rank's step 13.949 ms -> "
                          "9.500 ms (cluster.step_time_ns.max), confidence 0.5\n"),
            std::string::npos)
      << r.output;
  // The report's advisor takes the same model.
  CommandResult md = RunMoetrace("report " + dir + "/kineto --preset tiny-moe --md " + dir + "/r.md");
  ASSERT_EQ(md.exit_code, 0) << md.output;
  EXPECT_NE(ReadFile(dir + "/r.md").find("| 1 | -31.9 % | change the layout to TP 2 PP 2 EP 2 (x TP: 4) DP 4 MBS 4 "
                                         "dualpipe flat recompute-none (model-based, searched on 16 cards"),
            std::string::npos)
      << ReadFile(dir + "/r.md");
  CommandResult other = RunMoetrace("advise " + dir + "/kineto --preset tiny-moe --set parallel.world_size=32 "
                                    "--set parallel.dp=16");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("the trace records world size 16, the configuration parallel.world_size = 32"),
            std::string::npos)
      << other.output;
  // The same from a RunConfig file, as `generate --config` reads it.
  std::ofstream(dir + "/wide.json") << R"({"preset": "tiny-moe", "parallel": {"world_size": 32, "dp": 16}})";
  CommandResult file = RunMoetrace("advise " + dir + "/kineto --config " + dir + "/wide.json");
  EXPECT_EQ(file.exit_code, 2) << file.output;
  EXPECT_NE(file.output.find("the trace records world size 16, the configuration parallel.world_size = 32"),
            std::string::npos)
      << file.output;
  CommandResult own = RunMoetrace("advise " + in + " --preset tiny-moe");
  EXPECT_EQ(own.exit_code, 2) << own.output;
  EXPECT_NE(own.output.find("carries its own run configuration"), std::string::npos) << own.output;
  CommandResult lone = RunMoetrace("advise " + dir + "/kineto --set parallel.tp=2");
  EXPECT_EQ(lone.exit_code, 2) << lone.output;
}

}  // namespace
}  // namespace moetrace::testing
