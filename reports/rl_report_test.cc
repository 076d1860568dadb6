// The reports' RL post-training section, from an analysis built by hand:
// the Markdown rows, the HTML timeline's boxes, escaping of the trace's
// names, and no trace of it when the analysis has no RL.
#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "formats/sample_trace.h"
#include "reports/report.h"
#include "reports/rl_rows.h"
#include "reports/rl_timeline.h"
#include "reports/test_traces.h"

namespace moetrace {
namespace {

size_t RlCount(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(RlReport, MarkdownFiguresAndPhaseRows) {
  ReportData rd;
  rd.analysis = MakeRlAnalysis();
  const std::string md = RenderMarkdownReport(rd);
  EXPECT_EQ(md.find("Nothing to report"), std::string::npos) << md;
  EXPECT_NE(md.find("### RL post-training\n\n| figure | value | |\n|---|---:|---|\n"
                    "| Placement | colocated | RL Fusion: cards switch between rollout and training |\n"
                    "| Cards | 8 | 2 iterations |\n"
                    "| Staleness | 1 (StaleSync) | weight versions the rollout lagged, max over iterations |\n"
                    "| Steady-state iteration | 8.000 s | median window of the iterations after the first |\n"
                    "| Utilisation | 81.2 % | card-time inside a phase / cards x windows |\n"
                    "| Long-tail idle | 2.8 % | rollout cards done before the longest response, share of card-time |\n"
                    "| Switch | 5.6 % | resharding and weight sync, share of the windows |\n"
                    "| Generated | 14.0 k tokens/s | response tokens per second of windows |\n"
                    "| Trained | 35.0 k tokens/s | prompt + response tokens trained per second |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Iteration 0: window 10.000 s, utilisation 95.0 %, long-tail idle 4.000 s card-time, "
                    "switch 1.000 s, staleness 0, 123 k tokens generated.\n\n"
                    "| task | role | starts at | span | share | cards | card-time |\n"
                    "|---|---|---:|---:|---:|---:|---:|\n"
                    "| generate_sequences | rollout | 0.000 ms | 4.000 s | 40.0 % | 8 | 28.000 s |\n"
                    "| compute_log_prob | actor | 4.000 s | 1.000 s | 10.0 % | 8 | 8.000 s |\n"
                    "| compute_ref_log_prob | ref | 5.000 s | 1.000 s | 10.0 % | 8 | 8.000 s |\n"
                    "| reshard_to_train | actor | 6.000 s | 500.000 ms | 5.0 % | 8 | 4.000 s |\n"
                    "| update_actor | actor | 6.500 s | 3.000 s | 30.0 % | 8 | 24.000 s |\n"
                    "| reshard_to_infer | actor | 9.500 s | 500.000 ms | 5.0 % | 8 | 4.000 s |\n\n"),
            std::string::npos)
      << md;
  // The stale rollout started 1 s before its window; the trace's names
  // are cell-escaped.
  EXPECT_NE(md.find("| generate_sequences | rollout | -1.000 s | 3.000 s | 37.5 % | 8 | 24.000 s |\n"
                    "| compute_rm_score | rew&lt;ard>\\|\"x\" | 2.000 s | 1.000 s | 12.5 % | 4 | 4.000 s |\n"
                    "| my&lt;task> | actor | 3.000 s | 1.000 s | 12.5 % | 1 | 1.000 s |\n"),
            std::string::npos)
      << md;
}

TEST(RlReport, MarkdownKeepsFourIterations) {
  ReportData rd;
  rd.analysis = MakeRlAnalysis();
  for (int i = 2; i < 6; ++i) *rd.analysis.mutable_rl()->add_iterations() = rd.analysis.rl().iterations(1);
  const std::string md = RenderMarkdownReport(rd);
  EXPECT_EQ(RlCount(md, "| task | role | starts at |"), 4u);
  EXPECT_NE(md.find("2 more iterations in `rl.iterations` of `analyze --json`."), std::string::npos);
}

TEST(RlReport, TimelineGeometry) {
  const RlTimeline t = BuildRlTimeline(MakeRlAnalysis().rl(), 64);
  // Roles in reading order, the unknown one last.
  ASSERT_EQ(t.lanes.size(), 4u);
  EXPECT_EQ(t.lanes[0].role, "rollout");
  EXPECT_EQ(t.lanes[1].role, "actor");
  EXPECT_EQ(t.lanes[2].role, "ref");
  EXPECT_EQ(t.lanes[3].role, "rew<ard>|\"x\"");
  // rollout: two phases and one idle box (iteration 1 has no idle).
  ASSERT_EQ(t.lanes[0].boxes.size(), 3u);
  EXPECT_EQ(t.lanes[1].boxes.size(), 6u);
  // The axis runs 0-18 s over 960 units from x = 110.
  EXPECT_DOUBLE_EQ(t.lanes[0].boxes[0].x, 110);
  EXPECT_NEAR(t.lanes[0].boxes[0].w, 4.0 / 18 * 960, 1e-9);
  // Idle 4 s card-time over 8 cards: the last 0.5 s of the 0-4 s rollout.
  EXPECT_EQ(t.lanes[0].boxes[1].cls, "rl-idle");
  EXPECT_NEAR(t.lanes[0].boxes[1].x, 110 + 3.5 / 18 * 960, 1e-9);
  EXPECT_NEAR(t.lanes[0].boxes[1].w, 0.5 / 18 * 960, 1e-9);
  EXPECT_EQ(t.lanes[0].boxes[2].cls, "rl-t0");
  EXPECT_NEAR(t.lanes[0].boxes[2].x, 110 + 9.0 / 18 * 960, 1e-9);
  EXPECT_EQ(t.lanes[1].boxes[4].cls, "rl-tx");  // my<task>
  ASSERT_EQ(t.marks.size(), 2u);
  EXPECT_NEAR(t.marks[1].x, 110 + 10.0 / 18 * 960, 1e-9);
  EXPECT_EQ(t.marks[1].label, "it 1");
  // The tasks drawn, in kRlTasks order, then the unknown one.
  std::string legend;
  for (const RlLegendItem& l : t.legend) legend += l.cls + "=" + l.task + " ";
  EXPECT_EQ(legend,
            "rl-t0=generate_sequences rl-t1=compute_log_prob rl-t2=compute_ref_log_prob rl-t3=compute_rm_score "
            "rl-t5=update_actor rl-t7=reshard_to_train rl-t8=reshard_to_infer rl-tx=other task ");
  EXPECT_EQ(t.duration, "18.000 s");
  EXPECT_EQ(t.more_iterations, 0u);
}

TEST(RlReport, HtmlSectionTimelineAndEscaping) {
  ReportData rd;
  rd.analysis = MakeRlAnalysis();
  const std::string html = RenderHtmlReport(rd);
  EXPECT_NE(html.find("<section id=\"rl\">"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#rl\">RL post-training</a>"), std::string::npos);
  EXPECT_EQ(RlCount(html, "aria-label=\"RL phase timeline\""), 1u);
  // 10 phases and one idle box, each a rect with a tooltip.
  EXPECT_EQ(RlCount(html, "height=\"20\" class=\"rl-t"), 10u);
  EXPECT_EQ(RlCount(html, "height=\"20\" class=\"rl-idle\" fill=\"#ffffff\" fill-opacity=\"0.65\" stroke=\"#57606a\" "
                        "stroke-dasharray=\"3 2\"><title>iteration 0 long-tail idle: 4.000 s card-time, "
                        "500.000 ms per rollout card on average</title>"),
            1u)
      << html;
  EXPECT_EQ(RlCount(html, "<rect x=\"110.0\" y=\"4.0\" width=\"213.3\" height=\"20\" class=\"rl-t0\" fill=\"#59a14f\"><title>iteration 0 "
                        "rollout/generate_sequences: 4.000 s on 8 cards, 28.000 s card-time</title></rect>"),
            1u)
      << html;
  EXPECT_EQ(RlCount(html, "stroke-dasharray=\"2 2\""), 2u);  // one line per iteration window
  // The unknown task in the "other" grey, the legend with the colours drawn.
  EXPECT_EQ(RlCount(html, "class=\"rl-tx\" fill=\"#79706e\"><title>iteration 1 actor/my&lt;task&gt;"), 1u);
  EXPECT_EQ(RlCount(html, "<i class=\"rl-t"), 8u);
  // Two iteration tables.
  EXPECT_EQ(RlCount(html, "<h3>Iteration "), 2u);
  EXPECT_NE(html.find("<tr><td>update_actor</td><td>actor</td><td class=\"num\">4.000 s</td><td class=\"num\">4.000 s"
                      "</td><td class=\"num\">50.0 %</td><td class=\"num\">8</td><td class=\"num\">32.000 s</td></tr>"),
            std::string::npos)
      << html;
  // The trace's names only escaped: lane label, tooltip, table.
  EXPECT_EQ(RlCount(html, "<ard>"), 0u);
  EXPECT_EQ(RlCount(html, "<task>"), 0u);
  EXPECT_EQ(RlCount(html, "rew&lt;ard&gt;|&quot;x&quot;"), 3u) << html;
  EXPECT_EQ(RlCount(html, "my&lt;task&gt;"), 2u);  // tooltip, table
  EXPECT_EQ(RlCount(html, "<text x=\"0\" y=\"96.0\">rew&lt;ard&gt;|&quot;x&quot;</text>"), 1u);
}

// No RL: the section, its nav entry and its styles' users are absent, and
// a message with RL content but present = false renders the same as none.
TEST(RlReport, AbsentWithoutRl) {
  ReportData rd;
  {
    MemorySource source(MakeSampleTrace(4, 16, 2));
    rd = CollectReportData(Analyze(source), &source);
  }
  const std::string html = RenderHtmlReport(rd), md = RenderMarkdownReport(rd);
  EXPECT_EQ(html.find("id=\"rl\""), std::string::npos);
  EXPECT_EQ(html.find("RL post-training"), std::string::npos);
  EXPECT_EQ(RlCount(html, "class=\"rl-"), 0u);
  EXPECT_EQ(md.find("RL post-training"), std::string::npos);
  ReportData off = rd;
  *off.analysis.mutable_rl() = MakeRlAnalysis().rl();
  off.analysis.mutable_rl()->set_present(false);
  EXPECT_EQ(RenderHtmlReport(off), html);
  EXPECT_EQ(RenderMarkdownReport(off), md);
}

}  // namespace
}  // namespace moetrace
