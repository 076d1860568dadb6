// moetrace report INPUT... [--html OUT.html] [--md OUT.md]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli/commands.h"
#include "formats/atomic_file.h"
#include "reports/advice.h"
#include "reports/inputs.h"
#include "reports/report.h"

namespace moetrace::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string html, md, advice;
  int threads = 0;
};

int RunReport(const ReportArgs& args) {
  // A bad advice document exits 2 before the (long) analysis.
  std::vector<advise::Proposal> proposals;
  if (!args.advice.empty()) proposals = LoadAdviceJson(args.advice);
  std::function<void(size_t, size_t)> progress;
  if (isatty(STDERR_FILENO)) {
    progress = [](size_t done, size_t total) {
      fmt::print(stderr, "\ranalyzing ranks: {}/{}", done, total);
      if (done == total) fmt::print(stderr, "\r\033[K");
    };
  }
  LoadedInputs in = LoadInputs(args.inputs, args.threads, progress);
  ReportData data = CollectReportData(std::move(in.analysis), in.trace.get());
  data.proposals = std::move(proposals);
  const std::string md = RenderMarkdownReport(data);
  if (!args.html.empty()) WriteFileAtomically(args.html, RenderHtmlReport(data));
  if (!args.md.empty()) WriteFileAtomically(args.md, md);
  // Without an output file the Markdown goes to the terminal.
  if (args.html.empty() && args.md.empty()) fmt::print("{}", md);
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand("report", "Write an HTML and/or Markdown report of an analysis");
  sub->add_option("inputs", args->inputs, "Traces, or one document saved by `analyze --json`")->required();
  sub->add_option("--html", args->html, "Write a self-contained HTML report here");
  sub->add_option("--md", args->md, "Write a Markdown report (PR-comment sized) here");
  sub->add_option("--advice", args->advice, "Add the proposals of a saved `moetrace advise --json`");
  sub->add_option("--threads", args->threads, "Worker threads (default: all cores)");
  Register(sub, [args] { return RunReport(*args); });
}

}  // namespace moetrace::cli
