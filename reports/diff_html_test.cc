#include "reports/diff_html.h"

#include <gtest/gtest.h>

#include "analyzer/diff/diff.h"
#include "analyzer/diff/diff_test_analyses.h"

namespace moetrace {
namespace {

TEST(DiffHtml, TablesInTheReportStyleWithNamesEscaped) {
  analysis::Analysis a = testing::DiffSample(false), b = testing::DiffSample(true);
  b.mutable_cluster()->mutable_operators()->mutable_top(1)->set_name("Perm|ute<script>&");
  const std::string html = RenderDiffHtml(BuildDiff(a, b, "a<b>.json", "b.json"));
  EXPECT_NE(html.find("<title>moetrace diff: a&lt;b&gt;.json vs b.json</title>"), std::string::npos);
  EXPECT_NE(html.find("<td>Perm|ute&lt;script&gt;&amp;</td>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  // The verdict card: slower is bad.
  EXPECT_NE(html.find("<div class=\"card bad\"><div class=\"label\">change</div><div class=\"value\">+2.000 ms</div>"),
            std::string::npos) << html;
  EXPECT_NE(html.find("<tr><td>host_bound_dispatch_ns</td><td class=\"num\">0.500 ms</td><td class=\"num\">2.500 ms</td>"
                      "<td class=\"num\">+2.000 ms (+400.0%)</td><td class=\"num\">100.0%</td></tr>"),
            std::string::npos);
}

}  // namespace
}  // namespace moetrace
