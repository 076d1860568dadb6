// moetrace diff A B [--json OUT] [--md OUT] [--html OUT]
#include <fmt/core.h>

#include <memory>
#include <optional>
#include <string>

#include "analyzer/diff/diff.h"
#include "analyzer/diff/diff_text.h"
#include "analyzer/distributed.h"
#include "analyzer/stable_json.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/progress.h"
#include "formats/atomic_file.h"
#include "formats/output_paths.h"
#include "reports/diff_html.h"
#include "reports/input_pair.h"

namespace moetrace::cli {
namespace {

struct DiffArgs {
  std::string a, b, json, md, html;
  int threads = 0;
};

int RunDiff(const DiffArgs& args) {
  return RunOnProcesses([&](Communicator& comm) {
    // Each side is a trace (analyzed as `analyze` does) or a saved
    // `analyze --json` (detected from its first key); two saved ones are
    // parsed side by side (reports/input_pair.h).
    InputPairProgress progress;
    progress.analyze_a = AnalyzeProgress(comm, "A: analyzing ranks");
    progress.analyze_b = AnalyzeProgress(comm, "B: analyzing ranks");
    std::optional<Progress> parsing;
    if (comm.rank() == 0) {
      progress.parse = [&parsing](size_t done, size_t total) {
        if (!parsing) parsing.emplace("parsing saved analyses", total);
        parsing->Update(done);
        if (done == total) parsing.reset();  // clears the line before the table
      };
    }
    const InputPair in = LoadInputPair(args.a, args.b, args.threads, progress, comm);
    OnFirstProcess(comm, [&] {
      const analysis::Diff diff = BuildDiff(in.a, in.b, args.a, args.b);
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
  sub->add_option("--threads", args->threads,
                  "Worker threads (default: all cores; 1 also parses two saved analyses in turn)")
      ->check(CLI::Range(0, 1024));  // 0: all cores
  Register(sub, [args] {
    CheckOutputPaths({args->a, args->b}, {args->json, args->md, args->html});
    return RunDiff(*args);
  });
}

}  // namespace moetrace::cli
