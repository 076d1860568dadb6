// moetrace report INPUT... [--html OUT.html] [--md OUT.md] [--advice ADVICE.json | --no-advice]
//   [--config FILE | --preset NAME] [--set KEY=VALUE]...
#include <fmt/core.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "analyzer/distributed.h"
#include "analyzer/human_number.h"
#include "analyzer/replay/replay_input.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/recorded_model_options.h"
#include "formats/atomic_file.h"
#include "formats/output_paths.h"
#include "reports/advice.h"
#include "reports/inputs.h"
#include "reports/report.h"

namespace moetrace::cli {

// cli/replay.cc
replay::ReplayInput ReadReplayInputs(const std::vector<std::string>& inputs,
                                     const std::string& reduce, Communicator& comm, int threads);

namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string html, md, advice;
  bool no_advice = false, always_advise = false;
  int threads = 0;
  ModelArgs model;  // of a recorded trace, for the advisor's layout rule
};

int RunReport(const ReportArgs& args) {
  const std::optional<tracegen::RunConfig> model = BuildModel(args.model, "report");
  return RunOnProcesses([&](Communicator& comm) {
    // A bad advice document exits 2 before the (long) analysis.
    std::vector<advise::Proposal> proposals;
    OnFirstProcess(comm, [&] {
      if (!args.advice.empty()) proposals = LoadAdviceJson(args.advice);
    });
    // The advisor runs on traces (a saved analysis has no events to replay)
    // unless told not to or given its saved output.
    bool eligible = false;
    OnEveryProcess(comm, [&] {
      eligible = args.advice.empty() && !args.no_advice &&
                 !(args.inputs.size() == 1 && IsAnalysisJson(args.inputs[0]));
    });
    LoadedInputs in = LoadInputs(args.inputs, args.threads, AnalyzeProgress(comm), comm);
    // By default only up to kWholeEvents (where replays take the whole
    // trace and seconds): above, the role-reduced replays take minutes (158 s
    // CPU, 2.9 GB on the 718B trace against the report's 14 s), so the
    // report says how to get them instead; --always-advise runs them.
    std::string advice_note;
    std::vector<advise::Proposal> not_proposed;
    bool run_advisor = false;
    if (eligible) {
      int decide = 0;
      OnFirstProcess(comm, [&] {
        int64_t events = 0;
        for (const auto& r : in.analysis.ranks()) events += r.event_count();
        decide = args.always_advise || events <= replay::kWholeEvents;
        if (!decide) {
          advice_note = fmt::format(
              "The advisor was not run: {} events is more than {} M, where its replays take minutes "
              "(about 2.5 CPU minutes and 3 GB for 214 M events). Run `moetrace advise --json "
              "advice.json` on the trace and give it with --advice, or use --always-advise.",
              HumanCount(double(events)), replay::kWholeEvents / 1'000'000);
        }
      });
      run_advisor = comm.AllReduceMax(decide) > 0;
    }
    if (run_advisor) {
      const replay::ReplayInput advised = ReadReplayInputs(args.inputs, "auto", comm, args.threads);
      OnFirstProcess(comm, [&] {
        advise::AdviseOptions options;
        if (advised.roles) options.roles = &*advised.roles;
        options.dropped = &not_proposed;
        options.threads = args.threads;
        if (model) options.model = &*model;
        proposals = advise::Advise(advised.trace, advised.before, options);
      });
    }
    OnFirstProcess(comm, [&] {
      ReportData data = CollectReportData(std::move(in.analysis), in.trace.get());
      data.proposals = std::move(proposals);
      data.advised = run_advisor || !args.advice.empty();
      data.advice_note = std::move(advice_note);
      data.not_proposed = std::move(not_proposed);
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
  CLI::Option* advice = sub->add_option(
      "--advice", args->advice, "Show the proposals of a saved `moetrace advise --json` instead of running the advisor");
  CLI::Option* no_advice =
      sub->add_flag("--no-advice", args->no_advice, "Do not run the advisor (no proposals section)")->excludes(advice);
  sub->add_flag("--always-advise", args->always_advise,
                "Run the advisor on traces of any size (by default only up to 10 M events)")
      ->excludes(advice)
      ->excludes(no_advice);
  sub->add_option("--threads", args->threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(0, 1024));  // 0: all cores
  AddModelOptions(sub, &args->model);
  Register(sub, [args] {
    std::vector<std::string> in = args->inputs;
    in.push_back(args->advice);
    CheckOutputPaths(in, {args->html, args->md});
    return RunReport(*args);
  });
}

}  // namespace moetrace::cli
