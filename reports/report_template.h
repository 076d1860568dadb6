// The mustache template of the HTML report (report_template.cc).
#pragma once

#include <string>

namespace moetrace {

// The report's stylesheet (also the diff page's: reports/diff_html.cc).
extern const char kReportCss[];
// The whole template, the stylesheet inside.
std::string ReportHtmlTemplate();

}  // namespace moetrace
