// `moetrace report`: a self-contained HTML page and a Markdown summary of an
// analysis. The trace, when there is one, adds what the analysis does not
// keep: a timeline excerpt, memory over time, the full expert-load matrix.
#pragma once

#include <optional>
#include <string>

#include "analyzer/advise/advise.h"
#include "analyzer/proto/analysis.pb.h"
#include "formats/trace_io.h"
#include "reports/trace_extracts.h"

namespace moetrace {

struct ReportData {
  analysis::Analysis analysis;
  std::optional<Timeline> timeline;   // worst step of the slowest rank
  std::optional<MemorySeries> memory; // the rank with the cluster's peak
  ExpertLoads experts;                // empty without routing records
  // Best predicted gain first: the advisor's, run by `report`, or read
  // from a saved `advise --json` (reports/advice.h).
  std::vector<advise::Proposal> proposals;
  bool advised = false;  // the advisor ran (or its output was given): none means none found
  std::string advice_note;  // why the advisor did not run, shown in its place
  // Candidates the advisor dropped, each with `not_proposed` (when it ran
  // here; a saved `advise --json` does not keep them).
  std::vector<advise::Proposal> not_proposed;
};

// `trace` may be null (a saved analysis): the trace-only parts stay empty.
ReportData CollectReportData(analysis::Analysis analysis, const TraceSource* trace);

// One HTML file: inline CSS and SVG, a Content-Security-Policy that forbids
// every network load, no script. Every string from the trace is escaped.
std::string RenderHtmlReport(const ReportData& data);
// The same findings as GitHub-flavoured Markdown tables, PR-comment sized.
std::string RenderMarkdownReport(const ReportData& data);

}  // namespace moetrace
