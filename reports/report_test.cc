#include "reports/report.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "analyzer/analyze.h"
#include "analyzer/gate.h"
#include "analyzer/stable_json.h"
#include "formats/sample_trace.h"
#include "reports/findings.h"
#include "reports/report_template.h"
#include "reports/test_traces.h"

namespace moetrace {
namespace {

size_t Count(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

ReportData FromTrace(Trace t) {
  MemorySource source(std::move(t));
  analysis::Analysis a = Analyze(source);
  return CollectReportData(std::move(a), &source);
}

TEST(Report, TemplateHasNoUnescapedTags) {
  const std::string t = ReportHtmlTemplate();
  EXPECT_EQ(Count(t, "{{{"), 0u);
  EXPECT_EQ(Count(t, "{{&"), 0u);
}

TEST(Report, TraceStringsAreEscaped) {
  const ReportData rd = FromTrace(MakeHostileTrace());
  ASSERT_TRUE(rd.timeline.has_value());
  const std::string html = RenderHtmlReport(rd);
  // The op and group names only ever appear escaped.
  EXPECT_EQ(Count(html, "<script"), 0u);
  EXPECT_EQ(Count(html, "</script"), 0u);
  EXPECT_GT(Count(html, "&lt;script&gt;alert(&quot;pwn&quot; &amp; &apos;x&apos;)&lt;/script&gt;"), 0u) << html;
  EXPECT_EQ(Count(html, "alert(\"pwn\""), 0u);
  const std::string md = RenderMarkdownReport(rd);
  EXPECT_EQ(Count(md, "<script"), 0u);
}

// The operator view's tables name the trace's operators: escaped in both.
TEST(Report, OperatorSectionNamesTheTopOperatorEscaped) {
  const ReportData rd = FromTrace(MakeHostileTrace());
  const std::string html = RenderHtmlReport(rd);
  const size_t at = html.find("<section id=\"operators\">");
  ASSERT_NE(at, std::string::npos);
  const std::string section = html.substr(at, html.find("</section>", at) - at);
  EXPECT_NE(section.find("<h3>Top operators by device time</h3>"), std::string::npos);
  EXPECT_NE(section.find("<tr><td>&lt;script&gt;alert(&quot;pwn&quot; &amp; &apos;x&apos;)&lt;/script&gt;</td><td class=\"num\">vector</td>"),
            std::string::npos) << section;
  EXPECT_EQ(Count(section, "<script"), 0u);
  const std::string md = RenderMarkdownReport(rd);
  EXPECT_NE(md.find("### Operators (device time per rank and step)"), std::string::npos);
  EXPECT_NE(md.find("| &lt;script>alert(\"pwn\" & 'x')&lt;/script> | vector |"), std::string::npos) << md;
}

// The heat map is every rank's routing records summed per layer and expert
// (computed here from the ranks), and a saved analysis gives the same one.
TEST(Report, HeatMapSumsEveryRanksRoutingRecords) {
  const Trace t = MakeSampleTrace(4, 16, 5);
  std::map<int32_t, std::vector<int64_t>> want;
  for (const Rank& r : t.ranks) {
    for (const RoutingRecord& rec : r.routing) {
      ASSERT_GT(rec.ep_size, 0);
      std::vector<int64_t>& v = want[rec.layer];
      if (v.size() < rec.tokens_per_expert.size()) v.resize(rec.tokens_per_expert.size());
      for (size_t e = 0; e < rec.tokens_per_expert.size(); ++e) v[e] += rec.tokens_per_expert[e];
    }
  }
  ASSERT_FALSE(want.empty());
  const ReportData rd = FromTrace(t);
  ASSERT_EQ(rd.experts.layers.size(), want.size());
  size_t i = 0;
  for (const auto& [layer, v] : want) {
    EXPECT_EQ(rd.experts.layers[i], layer);
    EXPECT_EQ(rd.experts.tokens[i], v) << "layer " << layer;
    ++i;
  }
  const ReportData saved = CollectReportData(rd.analysis, nullptr);
  EXPECT_EQ(saved.experts.layers, rd.experts.layers);
  EXPECT_EQ(saved.experts.tokens, rd.experts.tokens);
  EXPECT_NE(RenderHtmlReport(saved).find("layer " + std::to_string(want.begin()->first) + " expert 0: "),
            std::string::npos);
}

TEST(Report, HtmlLoadsNothingFromTheNetwork) {
  const std::string html = RenderHtmlReport(FromTrace(MakeHostileTrace()));
  EXPECT_NE(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"),
            std::string::npos);
  EXPECT_EQ(Count(html, "http://"), 0u);
  EXPECT_EQ(Count(html, "https://"), 0u);
  EXPECT_EQ(Count(html, "//"), 0u);  // no protocol-relative URL either
  EXPECT_EQ(Count(html, "url("), 0u);
  EXPECT_EQ(Count(html, "@import"), 0u);
  // Every src= / href= is data: or an in-page anchor.
  std::regex attr(R"((src|href)\s*=\s*"([^"]*)\")");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attr); it != std::sregex_iterator(); ++it) {
    const std::string v = (*it)[2];
    EXPECT_TRUE(v.rfind("data:", 0) == 0 || v.rfind("#", 0) == 0) << (*it)[0];
  }
}

TEST(Report, SectionsFromATraceAndFromItsJson) {
  Trace t = MakeSampleTrace(4, 64, 3);
  const ReportData from_trace = FromTrace(t);
  const std::string html = RenderHtmlReport(from_trace);
  for (const char* id : {"headline", "breakdown", "comm", "operators", "timeline", "experts", "memory"}) {
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
    EXPECT_NE(html.find(std::string("<a href=\"#") + id + "\">"), std::string::npos) << id;
  }
  EXPECT_EQ(Count(html, "class=\"c-compute\"><title>rank "), 4u);  // one compute segment per rank bar
  EXPECT_NE(html.find("aria-label=\"expert load heat map\""), std::string::npos);
  EXPECT_NE(html.find("<polyline points=\""), std::string::npos);

  // From the saved analysis: same findings, no trace-only parts, no empty sections.
  const ReportData from_json =
      CollectReportData(ParseAnalysisJson(ToStableJson(from_trace.analysis), "a.json"), nullptr);
  const std::string h2 = RenderHtmlReport(from_json);
  EXPECT_EQ(h2.find("<section id=\"timeline\">"), std::string::npos);
  EXPECT_EQ(h2.find("href=\"#timeline\""), std::string::npos);
  EXPECT_EQ(h2.find("<polyline"), std::string::npos);
  EXPECT_NE(h2.find("<section id=\"breakdown\">"), std::string::npos);
  EXPECT_NE(h2.find("<section id=\"memory\">"), std::string::npos);
  EXPECT_EQ(RenderMarkdownReport(from_json), RenderMarkdownReport(from_trace));
}

TEST(Report, EmptyAnalysisHasNoSections) {
  const std::string html = RenderHtmlReport(CollectReportData(analysis::Analysis(), nullptr));
  EXPECT_EQ(Count(html, "<section"), 0u);
  EXPECT_EQ(Count(html, "<nav></nav>"), 1u);
  EXPECT_EQ(Count(html, "Nothing to report: the analysis found no step with device activity."), 1u);
  EXPECT_NE(RenderMarkdownReport(CollectReportData(analysis::Analysis(), nullptr)).find("Nothing to report"),
            std::string::npos);
}

TEST(Report, ThousandsOfRanksAreGroupedWithOutliersNamed) {
  analysis::Analysis a;
  for (int r = 0; r < 4096; ++r) {
    auto* ra = a.add_ranks();
    ra->set_rank(r);
    ra->add_steps()->set_span_ns(1000);
    ra->mutable_breakdown()->set_span_ns(r == 777 ? 2000 : 1000);
    ra->mutable_breakdown()->set_compute_ns(r == 777 ? 1500 : 800);
    ra->mutable_breakdown()->set_free_ns(r == 777 ? 500 : 200);
  }
  a.mutable_cluster()->mutable_step_time_ns()->set_median(1000);
  auto* s = a.mutable_cluster()->add_slow_ranks();
  s->set_rank(777);
  s->set_metric("compute_ns");
  s->set_value(1500);
  s->set_mean(800);
  s->set_deviation(0.875);
  // Past the 5% rule but 3 ns of a 1000 ns step: counted, not singled out.
  auto* minor = a.mutable_cluster()->add_slow_ranks();
  minor->set_rank(5);
  minor->set_metric("free_ns");
  minor->set_value(53);
  minor->set_mean(50);
  minor->set_deviation(0.06);
  const Findings f = BuildFindings(a, 64);
  ASSERT_EQ(f.slow_ranks.size(), 1u);
  EXPECT_EQ(f.slow_ranks[0].rank(), 777);
  EXPECT_EQ(f.minor_slow_ranks, 1);
  EXPECT_TRUE(f.grouped);
  ASSERT_EQ(f.bars.size(), 64u);  // 62 groups of 66 ranks, one of 4 + rank 777
  EXPECT_EQ(f.bars[0].label, "ranks 0-65 (mean)");
  EXPECT_DOUBLE_EQ(f.bars[0].span, 1000);
  EXPECT_EQ(f.bars.back().label, "rank 777");
  EXPECT_TRUE(f.bars.back().outlier);
  EXPECT_DOUBLE_EQ(f.bars.back().compute, 1500);
  const std::string md = RenderMarkdownReport(CollectReportData(a, nullptr));
  EXPECT_NE(md.find("| rank 777 (outlier) | 0.002 ms |"), std::string::npos) << md;
  // The slow-rank tables keep to the terminal summary's rule.
  EXPECT_NE(md.find("| rank 777 | compute_ns | 0.002 ms | 0.001 ms | +87.5 % |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| rank 5 | free_ns"), std::string::npos) << md;
  EXPECT_NE(md.find("1 smaller deviation (under 1 % of the step) only in `cluster.slow_ranks`"), std::string::npos);
  const std::string html = RenderHtmlReport(CollectReportData(a, nullptr));
  EXPECT_NE(html.find("<tr><td>rank 777</td><td>compute_ns</td>"), std::string::npos);
  EXPECT_EQ(html.find("<tr><td>rank 5</td><td>free_ns</td>"), std::string::npos);
  EXPECT_NE(html.find("1 smaller deviation (under 1 % of the step)"), std::string::npos);
}

TEST(Report, ThroughputAndProposalsForPeople) {
  analysis::Analysis a;
  a.mutable_cluster()->set_tokens_per_s(2365909);
  const Findings f = BuildFindings(a);
  ASSERT_EQ(f.headlines.size(), 1u);
  EXPECT_EQ(f.headlines[0].value, "2.37 M tokens/s");
  // An advisor that ran and found nothing says so; one that did not run is silent.
  ReportData rd = CollectReportData(a, nullptr);
  EXPECT_EQ(RenderHtmlReport(rd).find("<section id=\"advice\">"), std::string::npos);
  rd.advised = true;
  const std::string html = RenderHtmlReport(rd);
  EXPECT_NE(html.find("The advisor found nothing to propose"), std::string::npos);
  // The proposals section comes before the headline.
  EXPECT_LT(html.find("<section id=\"advice\">"), html.find("<section id=\"headline\">"));
  EXPECT_NE(RenderMarkdownReport(rd).find("The advisor found nothing to propose."), std::string::npos);
  // What the advisor tried and dropped is listed with its reason.
  advise::Proposal bubble;
  bubble.title = "interleaved pipeline <2>";
  bubble.not_proposed = "bubble 38.9 % -> 44.4 %: the plan does not lower its own metric";
  rd.not_proposed = {bubble};
  EXPECT_NE(RenderHtmlReport(rd).find("<li>interleaved pipeline &lt;2&gt;: bubble 38.9 % -&gt; 44.4 %: the plan does "
                                      "not lower its own metric</li>"),
            std::string::npos);
  // Markdown keeps the arrow as written ('<2>' opens no tag; '->' is no markup).
  EXPECT_NE(RenderMarkdownReport(rd).find("Tried and not proposed: interleaved pipeline <2> (bubble 38.9 % "
                                          "-> 44.4 %: the plan does not lower its own metric).\n"),
            std::string::npos);
  rd.not_proposed.clear();
  // Not run at scale: the note stands in its place (escaped).
  rd.advised = false;
  rd.advice_note = "The advisor was not run: 214 M events <more>";
  const std::string skipped = RenderHtmlReport(rd);
  EXPECT_NE(skipped.find("<p class=\"note\">The advisor was not run: 214 M events &lt;more&gt;</p>"),
            std::string::npos);
  EXPECT_EQ(skipped.find("found nothing to propose"), std::string::npos);
  EXPECT_NE(RenderMarkdownReport(rd).find("> The advisor was not run: 214 M events &lt;more>\n"),
            std::string::npos);
}

}  // namespace
}  // namespace moetrace
