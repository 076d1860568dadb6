// End-to-end: `moetrace gate` exit codes and outputs, `moetrace report`
// from a trace and from a saved analysis.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analyzer/gate.h"
#include "analyzer/stable_json.h"
#include "formats/native/native_writer.h"
#include "formats/sample_trace.h"
#include "formats/trace_io.h"
#include "reports/test_traces.h"
#include "tests/run_command.h"

namespace moetrace::testing {
namespace {

namespace fs = std::filesystem;

std::string WriteTrace(const std::string& path, Trace t) {
  MemorySource source(std::move(t));
  auto sink = CreateNativeSink(path);
  Copy(source, *sink);
  return path;
}

TEST(GateCli, TraceAgainstItsOwnBaselinePasses) {
  const std::string dir = TempDir("gate-self");
  const std::string trace = WriteTrace(dir + "/t.mtrace", MakeSampleTrace(3, 32, 5));
  ASSERT_EQ(RunMoetrace("analyze " + trace + " --json " + dir + "/base.json").exit_code, 0);
  CommandResult r = RunMoetrace("gate " + trace + " --baseline " + dir + "/base.json --junit " + dir +
                                "/j.xml --md " + dir + "/g.md");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gate: pass (11 metrics)"), std::string::npos) << r.output;
  const std::string xml = ReadFile(dir + "/j.xml");
  EXPECT_NE(xml.find("<testsuite name=\"moetrace gate\" tests=\"11\" failures=\"0\""), std::string::npos) << xml;
  EXPECT_NE(ReadFile(dir + "/g.md").find(":white_check_mark: all 11 metrics pass"), std::string::npos);
  // The saved analysis as INPUT gives the same verdicts.
  r = RunMoetrace("gate " + dir + "/base.json --baseline " + dir + "/base.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(GateCli, BetterHostBoundBaselineFailsNamingTheMetric) {
  const std::string dir = TempDir("gate-regress");
  const std::string trace = WriteTrace(dir + "/t.mtrace", MakeSampleTrace(3, 32, 5));
  ASSERT_EQ(RunMoetrace("analyze " + trace + " --json " + dir + "/cur.json").exit_code, 0);
  // The baseline: the same run with 5 points less host-bound time.
  analysis::Analysis base = LoadAnalysisJson(dir + "/cur.json");
  const double hb = base.cluster().ratios().host_bound();
  base.mutable_cluster()->mutable_ratios()->set_host_bound(hb - 0.05);
  std::ofstream(dir + "/base.json") << ToStableJson(base);
  CommandResult r = RunMoetrace("gate " + trace + " --baseline " + dir + "/base.json --junit " + dir + "/j.xml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("gate: FAIL (1 of 11 metrics regressed)"), std::string::npos) << r.output;
  const std::string xml = ReadFile(dir + "/j.xml");
  EXPECT_NE(xml.find("name=\"cluster.ratios.host_bound\">\n      <failure message=\"cluster.ratios.host_bound regressed\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos);
}

TEST(GateCli, HostBoundInducedByTracegenFailsOnHostBound) {
  // The case: the task queue off and a smaller micro-batch (2 -> 1)
  // against the default host. Shorter sequences (512) make the device ops
  // short enough for the host to show: host-bound goes from 0.5% to 4.1%.
  const std::string dir = TempDir("gate-tracegen");
  const std::string common = "generate --preset tiny-moe --steps 2 --set model.seq_length=512 ";
  ASSERT_EQ(RunMoetrace(common + "--set parallel.micro_batch_size=2 -o " + dir + "/base.mtrace")
                .exit_code,
            0);
  ASSERT_EQ(RunMoetrace(common + "--set host.task_queue=false --set parallel.micro_batch_size=1 -o " +
                        dir + "/slow.mtrace")
                .exit_code,
            0);
  ASSERT_EQ(RunMoetrace("analyze " + dir + "/base.mtrace --json " + dir + "/base.json").exit_code, 0);
  CommandResult self = RunMoetrace("gate " + dir + "/base.mtrace --baseline " + dir + "/base.json");
  EXPECT_EQ(self.exit_code, 0) << self.output;
  CommandResult r = RunMoetrace("gate " + dir + "/slow.mtrace --baseline " + dir + "/base.json --junit " + dir +
                                "/j.xml --md " + dir + "/g.md");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string xml = ReadFile(dir + "/j.xml");
  EXPECT_NE(xml.find("name=\"cluster.ratios.host_bound\">\n      <failure message=\"cluster.ratios.host_bound regressed\""),
            std::string::npos)
      << r.output << xml;
  EXPECT_NE(ReadFile(dir + "/g.md").find("| `cluster.ratios.host_bound` |"), std::string::npos);
  // With the operator view in `analyze` (branch opview, issue #18 part 1) the
  // Markdown and the JUnit failure also say which operators got slower.
  if (LoadAnalysisJson(dir + "/base.json").cluster().operators().top_size() > 0) {
    EXPECT_NE(ReadFile(dir + "/g.md").find("\n#### What got slower: top operator deltas (baseline → current)\n"),
              std::string::npos);
    EXPECT_NE(xml.find("slower operators (device time per rank and step): "), std::string::npos) << xml;
  }
}

TEST(GateCli, BadInputsExitTwo) {
  const std::string dir = TempDir("gate-bad");
  const std::string trace = WriteTrace(dir + "/t.mtrace", MakeSampleTrace(2, 16, 5));
  ASSERT_EQ(RunMoetrace("analyze " + trace + " --json " + dir + "/base.json").exit_code, 0);
  std::ofstream(dir + "/gate.toml") << "[\"cluster.ratios.host_bound\"]\nabs = 0.02\nbetter = lower\n";
  CommandResult r = RunMoetrace("gate " + trace + " --baseline " + dir + "/base.json --thresholds " + dir +
                                "/gate.toml --junit " + dir + "/j.xml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(dir + "/gate.toml: line 3: "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/j.xml"));
  std::ofstream(dir + "/broken.json") << "{\"cluster\": {\"ratios\": 7}}";
  r = RunMoetrace("gate " + trace + " --baseline " + dir + "/broken.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(dir + "/broken.json: not an `analyze --json` document"), std::string::npos) << r.output;
  EXPECT_EQ(RunMoetrace("gate " + trace).exit_code, 2);  // --baseline is required
  // A good thresholds file that tightens host-bound to nothing still passes on itself.
  std::ofstream(dir + "/ok.toml") << "[\"cluster.ratios.host_bound\"]\nabs = 0\n";
  r = RunMoetrace("gate " + trace + " --baseline " + dir + "/base.json --thresholds " + dir + "/ok.toml");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ReportCli, HtmlAndMarkdownFromTraceAndFromJson) {
  const std::string dir = TempDir("report");
  const std::string trace = WriteTrace(dir + "/t.mtrace", MakeHostileTrace());
  CommandResult r = RunMoetrace("report " + trace + " --html " + dir + "/r.html --md " + dir + "/r.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = ReadFile(dir + "/r.html");
  EXPECT_NE(html.find("<section id=\"timeline\">"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;pwn&quot; &amp; &apos;x&apos;)&lt;/script&gt;"), std::string::npos);
  // The advisor ran on the trace (its section is there, proposals or not).
  EXPECT_NE(html.find("<section id=\"advice\">"), std::string::npos);
  EXPECT_EQ(ReadFile(dir + "/r.md").rfind("## moetrace report: 2 ranks, ", 0), 0u);
  // Without the advisor the trace's report is its saved analysis's report.
  r = RunMoetrace("report " + trace + " --no-advice --md " + dir + "/r0.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = ReadFile(dir + "/r0.md");
  EXPECT_EQ(md.find("proposals"), std::string::npos) << md;
  ASSERT_EQ(RunMoetrace("analyze " + trace + " --json " + dir + "/a.json").exit_code, 0);
  r = RunMoetrace("report " + dir + "/a.json --md " + dir + "/r2.md --html " + dir + "/r2.html");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(dir + "/r2.md"), md);
  EXPECT_EQ(ReadFile(dir + "/r2.html").find("<section id=\"timeline\">"), std::string::npos);
  // No output file: Markdown on stdout.
  r = RunMoetrace("report " + dir + "/a.json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, md);
}

TEST(ReportCli, AdvisorProposalsFromSavedAdvice) {
  const std::string dir = TempDir("report-advice");
  ASSERT_EQ(RunMoetrace("generate --preset tiny-moe --steps 2 --set host.task_queue=false -o " + dir + "/t.mtrace")
                .exit_code,
            0);
  ASSERT_EQ(RunMoetrace("advise " + dir + "/t.mtrace --json " + dir + "/advice.json").exit_code, 0);
  CommandResult r = RunMoetrace("report " + dir + "/t.mtrace --advice " + dir + "/advice.json --html " + dir +
                                "/r.html --md " + dir + "/r.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(ReadFile(dir + "/r.html").find("<section id=\"advice\">"), std::string::npos);
  const std::string saved = ReadFile(dir + "/r.md");
  EXPECT_NE(saved.find("### Top proposals (moetrace advise, best predicted gain first)\n\n"
                       "| # | predicted step time | proposal | setting |\n|---:|---:|---|---|\n| 1 | -"),
            std::string::npos)
      << saved;
  // Run by the report itself: the same proposals, first.
  r = RunMoetrace("report " + dir + "/t.mtrace --md " + dir + "/run.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // It also lists what it tried and dropped (a saved advise --json does not keep those).
  std::string run = ReadFile(dir + "/run.md");
  const size_t tried = run.find("Tried and not proposed: ");
  ASSERT_NE(tried, std::string::npos) << run;
  run.erase(tried, run.find("\n\n", tried) + 2 - tried);
  EXPECT_EQ(run, saved);
  EXPECT_NE(RunMoetrace("report " + dir + "/t.mtrace --no-advice --advice " + dir + "/advice.json").exit_code, 0);
  std::ofstream(dir + "/bad.json") << "{\"proposals\": 3}";
  r = RunMoetrace("report " + dir + "/t.mtrace --advice " + dir + "/bad.json --md " + dir + "/x.md");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(dir + "/bad.json: not an `advise --json` document"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace moetrace::testing
