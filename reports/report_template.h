// The mustache template of the HTML report (report_template.cc).
#pragma once

namespace moetrace {

extern const char kReportHtmlTemplate[];

}  // namespace moetrace
