// moetrace info INPUT... [--json]
#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/progress.h"
#include "formats/open_trace.h"
#include "formats/trace_summary.h"

namespace moetrace::cli {
namespace {

struct InfoOptions {
  std::vector<std::string> inputs;
  bool json = false;
  int threads = 0;
};

int RunInfo(const InfoOptions& o) {
  std::vector<TraceSummary> summaries;
  for (const std::string& path : o.inputs) {
    std::unique_ptr<TraceSource> source = OpenTrace(path);
    Progress progress("reading " + path, source->rank_count());
    TraceSummary s = Summarize(*source, [&](size_t i, size_t) { progress.Update(i); }, o.threads);
    s.path = path;
    s.format = TraceFormatName(DetectFormat(path));
    summaries.push_back(std::move(s));
  }
  if (o.json) {
    fmt::print("{}", SummaryToJson(summaries));
  } else {
    for (const TraceSummary& s : summaries) fmt::print("{}", SummaryToText(s));
  }
  return 0;
}

}  // namespace

void AddInfoCommand(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand(
      "info", "Summarise traces: ranks, tracks, events per category, span, source, labels");
  sub->add_option("inputs", o->inputs, "Traces (.mtrace, Kineto JSON, Ascend profiler output)")
      ->required();
  sub->add_flag("--json", o->json, "Machine-readable output with stable keys (see README)");
  sub->add_option("--threads", o->threads, "Threads reading ranks (default: one per core); the output is the same for any count")
      ->check(CLI::Range(1, 1024));
  Register(sub, [o] { return RunOnFirstProcess([&] { return RunInfo(*o); }); });
}

}  // namespace moetrace::cli
