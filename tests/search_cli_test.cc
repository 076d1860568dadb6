// End-to-end tests of `moetrace search`: exit codes, the key named in a
// bad --space, the JSON file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

const char* kSpace =
    " --space parallel.tp=1 --space parallel.pp=2 --space parallel.vpp=1 --space parallel.ep=4,8"
    " --space parallel.micro_batch_size=1 --space schedule.kind=1f1b --space comm.a2a=flat"
    " --space memory.recompute=none --space memory.swap=false";

TEST(SearchCli, BadSpaceKeyExitsTwoNamingTheKey) {
  CommandResult r = RunMoetrace("search --preset tiny-moe --cards 16 --space parallel.tq=1,2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("parallel.tq"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unknown key"), std::string::npos) << r.output;
  r = RunMoetrace("search --preset tiny-moe --cards 16 --space memory.recompute=some");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("memory.recompute"), std::string::npos) << r.output;
  r = RunMoetrace("search --preset tiny-moe --cards 16 --space parallel.ep=two");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("parallel.ep"), std::string::npos) << r.output;
  EXPECT_EQ(RunMoetrace("search --preset tiny-moe").exit_code, 2);  // --cards is required
  EXPECT_EQ(RunMoetrace("search --cards 16").exit_code, 2);         // no model
}

// A space with no valid layout has nothing to propose: the reasons on
// stdout, exit 2, no JSON written.
TEST(SearchCli, SpaceWithNoValidLayoutExitsTwoWithTheReasons) {
  const std::string dir = TempDir("search_cli_none");
  CommandResult r = RunMoetrace("search --preset tiny-moe --cards 16 --space parallel.tp=3 --json " + dir + "/s.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("0 valid layouts"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rejected: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no layout of the space fits"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.json"));
}

TEST(SearchCli, PrintsRankedLayoutsAndWritesJson) {
  const std::string dir = TempDir("search_cli");
  CommandResult r = RunMoetrace(std::string("search --preset tiny-moe --cards 16 --top 2 --verify 1") +
                                kSpace + " --json " + dir + "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("space: 4 candidates, 2 valid layouts, 2 fit in HBM"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rejected: duplicate 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("#1   TP 1 PP 2 EP "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("simulated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--expert-model-parallel-size"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("configured layout (TP 1 PP 2 EP 8 DP 8"), std::string::npos) << r.output;
  const std::string json = ReadFile(dir + "/s.json");
  EXPECT_EQ(json.rfind("{\n  \"model\": \"tiny-moe\",\n  \"cards\": 16,", 0), 0u) << json;
  EXPECT_NE(json.find("\"valid\": 2,"), std::string::npos) << json;
}

}  // namespace
}  // namespace moetrace::testing
