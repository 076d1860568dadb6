#include "reports/advice.h"

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "reports/report.h"

namespace moetrace {
namespace {

std::vector<advise::Proposal> Two() {
  advise::Proposal a;
  a.rule = "dispatch_host_bound";
  a.title = "Enable the task queue <b>&\"now\"</b>";
  a.knob = "TASK_QUEUE_ENABLE=2";
  a.config = {"host.task_queue=true"};
  a.replay = {"host.task_queue=true"};
  a.evidence = {{"cluster.ratios.host_bound", 0.12}};
  a.fixes = "cluster.ratios.host_bound";
  a.predicted = true;
  a.step_before_ns = 14'000'000;
  a.step_after_ns = 12'600'000;
  a.gain = 0.1;
  a.fixes_before = 0.12;
  a.fixes_after = 0.01;
  a.peak_before_bytes = 100;
  a.confidence = 0.8;
  advise::Proposal b;
  b.rule = "exposed_ep_comm";
  b.title = "Hierarchical all-to-all";
  b.knob = "--moe-hierarchical-alltoallv";
  b.confidence = 0.5;
  return {a, b};
}

TEST(Advice, ReadsBackWhatAdviseWrites) {
  const std::vector<advise::Proposal> p = ParseAdviceJson(advise::ProposalsJson(Two()), "advice.json");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].title, "Enable the task queue <b>&\"now\"</b>");
  EXPECT_EQ(p[0].knob, "TASK_QUEUE_ENABLE=2");
  EXPECT_TRUE(p[0].predicted);
  EXPECT_EQ(p[0].step_before_ns, 14'000'000);
  EXPECT_EQ(p[0].step_after_ns, 12'600'000);
  EXPECT_DOUBLE_EQ(p[0].gain, 0.1);
  EXPECT_EQ(p[0].peak_before_bytes, 100);
  EXPECT_EQ(p[0].peak_after_bytes, -1);
  ASSERT_EQ(p[0].evidence.size(), 1u);
  EXPECT_DOUBLE_EQ(p[0].evidence[0].value, 0.12);
  EXPECT_FALSE(p[1].predicted);
  EXPECT_DOUBLE_EQ(p[1].confidence, 0.5);
}

TEST(Advice, RenderedEscapedInHtmlAndMarkdown) {
  ReportData rd;
  rd.proposals = ParseAdviceJson(advise::ProposalsJson(Two()), "advice.json");
  const std::string html = RenderHtmlReport(rd);
  EXPECT_NE(html.find("<section id=\"advice\">"), std::string::npos);
  EXPECT_NE(html.find("Enable the task queue &lt;b&gt;&amp;&quot;now&quot;&lt;/b&gt;"), std::string::npos) << html;
  // The predicted gain leads its row; the step times follow.
  EXPECT_NE(html.find("<td class=\"num\"><b>-10.0 %</b><br><span class=\"note\">14.000 ms \u2192 12.600 ms</span>"),
            std::string::npos);
  EXPECT_NE(html.find("not predicted"), std::string::npos);
  // The metric it fixes, as people read it (analyzer/advise/effect_text.h).
  EXPECT_NE(html.find("<td>host-bound: 12.0 % \u2192 1.0 %</td>"), std::string::npos);
  const std::string md = RenderMarkdownReport(rd);
  // Markdown escapes only what it would read as markup: the tags' '<'.
  EXPECT_NE(md.find("| 1 | -10.0 % | Enable the task queue &lt;b>&\"now\"&lt;/b> | `TASK_QUEUE_ENABLE=2` |"),
            std::string::npos)
      << md;
}

TEST(Advice, NotAnAdviceDocument) {
  EXPECT_THROW(ParseAdviceJson("{\"cluster\": {}}", "a.json"), InputError);
  EXPECT_THROW(ParseAdviceJson("{\"proposals\": [1]}", "a.json"), InputError);
  EXPECT_THROW(ParseAdviceJson("{\"proposals\": [", "a.json"), InputError);
}

}  // namespace
}  // namespace moetrace
