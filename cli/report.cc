// moetrace report INPUT... [--html OUT.html] [--md OUT.md]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/distributed.h"
#include "cli/commands.h"
#include "cli/processes.h"
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
  return RunOnProcesses([&](Communicator& comm) {
    // A bad advice document exits 2 before the (long) analysis.
    std::vector<advise::Proposal> proposals;
    OnFirstProcess(comm, [&] {
      if (!args.advice.empty()) proposals = LoadAdviceJson(args.advice);
    });
    LoadedInputs in = LoadInputs(args.inputs, args.threads, AnalyzeProgress(comm), comm);
    OnFirstProcess(comm, [&] {
      ReportData data = CollectReportData(std::move(in.analysis), in.trace.get());
      data.proposals = std::move(proposals);
      const std::string md = RenderMarkdownReport(data);
      if (!args.html.empty()) WriteFileAtomically(args.html, RenderHtmlReport(data));
      if (!args.md.empty()) WriteFileAtomically(args.md, md);
      // Without an output file the Markdown goes to the terminal.
      if (args.html.empty() && args.md.empty()) fmt::print("{}", md);
    });
    return 0;
  });
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
