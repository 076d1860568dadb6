// End to end: `moetrace analyze` / `report` on msprof-analyze's
// cluster_analysis_output (the real sample folder), alone and inside a
// profiling root next to a rank's trace; a truncated file exits 2.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

namespace fs = std::filesystem;

TEST(ClusterOutputCli, AnalyzeJsonPathsAndSummary) {
  const std::string traces = RealTracesDir();
  const std::string in = traces + "/ascend/cluster-output";
  if (traces.empty() || !fs::exists(in)) GTEST_SKIP() << "no real traces (set MOETRACE_REAL_TRACES)";
  const std::string dir = TempDir("cluster-output-cli");
  CommandResult r = RunMoetrace("analyze '" + in + "' --json " + dir + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("msprof-analyze cluster output: 8 ranks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("slowest rank (moetrace: longest Stage): rank 0, 1754.646 ms, +2.4 % over the median"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sdma  rank 0       group (0, 1): 2.352 GB/s of 56 GB/s (4.20 %)"), std::string::npos)
      << r.output;
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.load(dir + "/a.json");
  simdjson::dom::element co = doc["cluster_output"];
  EXPECT_EQ(int64_t(co["rank_count"]), 8);
  EXPECT_EQ(int64_t(co["slowest"]["rank"]), 0);
  EXPECT_EQ(int64_t(co["slowest"]["span_ns"]), 1754645750);
  EXPECT_EQ(int64_t(co["spread"]["span_ns"]["median"]), 1714160125);
  EXPECT_EQ(std::string_view(co["slowest_links"].at(0)["transport"]), "sdma");
  EXPECT_EQ(std::string_view(co["slowest_links"].at(0)["group"]), "(0, 1)");
  EXPECT_NEAR(double(co["slowest_links"].at(0)["bandwidth_gb_s"]), 2.3518, 1e-4);
  EXPECT_EQ(std::string_view(co["slow_ranks"].at(0)["metric"]), "comm_ns");
  EXPECT_EQ(std::string_view(co["stages"].at(0)["index"]), "(0, 1, 2, 3, 4, 5, 6, 7)");
  EXPECT_EQ(std::string_view(co["groups"].at(0)["name"]), "(0, 1)");
  simdjson::dom::element st = doc["ranks"].at(5)["ascend"]["step_trace"];
  EXPECT_EQ(int64_t(doc["ranks"].at(5)["rank"]), 5);
  EXPECT_EQ(int64_t(st["comm_exposed_ns"]), 756374860);
  EXPECT_EQ(int64_t(st["compute_ns"]), 81367620);
  EXPECT_EQ(std::string_view(st["source"]), "cluster_step_trace_time.csv");

  r = RunMoetrace("report '" + in + "' --md " + dir + "/r.md --html " + dir + "/r.html");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = ReadFile(dir + "/r.md");
  EXPECT_NE(md.find("| 0 (slowest) | 1.755 s | 80.310 ms | 683.731 ms |"), std::string::npos) << md;
  EXPECT_NE(ReadFile(dir + "/r.html").find("Cluster output (msprof-analyze)"), std::string::npos);
}

TEST(ClusterOutputCli, ProfilingRootWithTracesAndClusterOutput) {
  const std::string traces = RealTracesDir();
  const std::string co = traces + "/ascend/cluster-output";
  const std::string rank = traces + "/ascend/advisor-timeline/ASCEND_PROFILER_OUTPUT/trace_view.json";
  if (traces.empty() || !fs::exists(co) || !fs::exists(rank)) GTEST_SKIP() << "no real traces";
  const std::string root = TempDir("cluster-output-root");
  fs::create_directories(root + "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT");
  fs::copy_file(rank, root + "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
  fs::create_directories(root + "/cluster_analysis_output");
  for (const char* f : {"cluster_step_trace_time.csv", "cluster_communication.json"}) {
    fs::copy_file(co + "/" + f, root + "/cluster_analysis_output/" + f);
  }
  CommandResult r = RunMoetrace("analyze " + root + " --json " + root + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("trace vs profiler"), std::string::npos) << r.output;
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.load(root + "/a.json");
  // Rank 0: the trace's breakdown and the profiler's figures side by side.
  simdjson::dom::element r0 = doc["ranks"].at(0);
  EXPECT_GT(int64_t(r0["event_count"]), 0);
  EXPECT_EQ(int64_t(r0["ascend"]["step_trace"]["span_ns"]), 1754645750);
  simdjson::dom::element cmp = doc["cluster_output"]["trace_comparison"].at(1);
  EXPECT_EQ(int64_t(cmp["rank"]), 0);
  EXPECT_EQ(std::string_view(cmp["metric"]), "compute_ns");
  EXPECT_EQ(int64_t(cmp["profiler_ns"]), 80309687);
  EXPECT_EQ(int64_t(cmp["trace_ns"]), int64_t(r0["breakdown"]["compute_ns"]) / int64_t(r0["steps"].get_array().size()));
  EXPECT_EQ(doc["ranks"].get_array().size(), 8u);

  // Only msprof-analyze's folder in the root: its ranks.
  fs::remove_all(root + "/rank0_ascend_pt");
  r = RunMoetrace("analyze " + root);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("msprof-analyze cluster output: 8 ranks"), std::string::npos) << r.output;
}

TEST(ClusterOutputCli, TruncatedFileExits2NamingFileAndByte) {
  const std::string dir = TempDir("cluster-output-bad");
  std::ofstream(dir + "/cluster_step_trace_time.csv") << "Step,Type,Index,Computing\n,rank,0,1\n";
  std::ofstream(dir + "/cluster_communication.json") << R"J({"(0, 1)": {"step": {"op": {"0": {"Commun)J";
  CommandResult r = RunMoetrace("analyze " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(dir + "/cluster_communication.json: byte "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace moetrace::testing
