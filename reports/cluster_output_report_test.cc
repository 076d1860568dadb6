// The reports' cluster output section (msprof-analyze's folder): the
// per-rank table, the slowest rank and links, file strings escaped.
#include <gtest/gtest.h>

#include "analyzer/cluster_output.h"
#include "reports/report.h"

namespace moetrace {
namespace {

size_t ClusterCount(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

ReportData Hostile() {
  const std::string evil = "(0, <script>alert(\"x\")</script>|1)";
  ClusterOutputFiles f;
  f.dir = "/runs/<b>cluster</b>";
  f.step_trace.push_back({"rank", "0", 0, kNone, {{"computing", 100}, {"communication_not_overlapped", 20}, {"free", 30}, {"stage", 150}}});
  f.step_trace.push_back({"rank", "1", 1, kNone, {{"computing", 90}, {"communication_not_overlapped", 10}, {"free", 20}, {"stage", 120}}});
  f.step_trace.push_back({"stage", evil, -1, kNone, {{"stage", 150}}});
  f.rank_links[{evil, 1, "hccs"}] = {2.0, 1.0, 3};
  f.groups.push_back({evil, "collective", {0, 1}});
  ReportData rd;
  AddClusterOutput(f, &rd.analysis);
  return rd;
}

TEST(ClusterOutputReport, TableSlowestRankAndLinks) {
  const ReportData rd = Hostile();
  const std::string md = RenderMarkdownReport(rd);
  EXPECT_NE(md.find("### Cluster output (msprof-analyze)"), std::string::npos) << md;
  EXPECT_NE(md.find("| rank | Stage | Computing | Communication (not overlapped) | Overlapped | Communication | Free | Bubble |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 0 (slowest) | 0.150 ms | 0.100 ms | 0.020 ms | - | - | 0.030 ms | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("Slowest rank: 0 (longest Stage"), std::string::npos) << md;
  EXPECT_NE(md.find("| hccs | rank 1 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| 2.000 GB/s | 56 GB/s | 3.6 % |"), std::string::npos) << md;
  EXPECT_EQ(ClusterCount(md, "<script"), 0u);
  EXPECT_EQ(ClusterCount(md, "<b>"), 0u);
  EXPECT_GT(ClusterCount(md, "\\|1)"), 0u);  // the pipe escaped in the table

  const std::string html = RenderHtmlReport(rd);
  EXPECT_NE(html.find("<section id=\"cluster-output\">"), std::string::npos);
  EXPECT_NE(html.find("href=\"#cluster-output\""), std::string::npos);
  EXPECT_NE(html.find("<td class=\"outlier\">0 (slowest)</td>"), std::string::npos) << html;
  EXPECT_EQ(ClusterCount(html, "<script"), 0u);
  EXPECT_EQ(ClusterCount(html, "<b>"), 0u);
  EXPECT_GT(ClusterCount(html, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), 2u);  // stage, link, group
  EXPECT_GT(ClusterCount(html, "&lt;b&gt;cluster&lt;/b&gt;"), 0u);
}

}  // namespace
}  // namespace moetrace
