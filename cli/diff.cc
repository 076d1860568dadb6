// moetrace diff A B [--json OUT] [--md OUT] [--html OUT]
#include <fmt/core.h>

#include <memory>
#include <string>

#include "analyzer/diff/diff.h"
#include "analyzer/diff/diff_text.h"
#include "analyzer/distributed.h"
#include "analyzer/stable_json.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "formats/atomic_file.h"
#include "reports/diff_html.h"
#include "reports/inputs.h"

namespace moetrace::cli {
namespace {

struct DiffArgs {
  std::string a, b, json, md, html;
  int threads = 0;
};

int RunDiff(const DiffArgs& args) {
  return RunOnProcesses([&](Communicator& comm) {
    // Each side is a trace (analyzed as `analyze` does) or a saved
    // `analyze --json` (detected by LoadInputs from its first key).
    LoadedInputs a = LoadInputs({args.a}, args.threads, AnalyzeProgress(comm), comm);
    a.trace.reset();  // only the analysis is compared
    LoadedInputs b = LoadInputs({args.b}, args.threads, AnalyzeProgress(comm), comm);
    b.trace.reset();
    OnFirstProcess(comm, [&] {
      const analysis::Diff diff = BuildDiff(a.analysis, b.analysis, args.a, args.b);
      if (!args.json.empty()) WriteFileAtomically(args.json, ToStableJson(diff));
      if (!args.md.empty()) WriteFileAtomically(args.md, DiffMarkdown(diff));
      if (!args.html.empty()) WriteFileAtomically(args.html, RenderDiffHtml(diff));
      fmt::print("{}", FormatDiffTable(diff));
    });
    return 0;
  });
}

}  // namespace

void AddDiffCommand(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* sub = app.add_subcommand(
      "diff", "Compare two runs (traces or saved `analyze --json`): what changed and what explains it");
  sub->add_option("a", args->a, "The reference run: a trace, or a document saved by `analyze --json`")
      ->required();
  sub->add_option("b", args->b, "The run compared with it (deltas are B - A)")->required();
  sub->add_option("--json", args->json, "Write the diff as JSON (analyzer/proto/diff.proto) here");
  sub->add_option("--md", args->md, "Write a Markdown summary (PR-comment sized) here");
  sub->add_option("--html", args->html, "Write a self-contained HTML page here");
  sub->add_option("--threads", args->threads, "Worker threads (default: all cores)");
  Register(sub, [args] { return RunDiff(*args); });
}

}  // namespace moetrace::cli
