// moetrace analyze INPUT... [--json OUT.json]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/distributed.h"
#include "analyzer/stable_json.h"
#include "analyzer/summary.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "formats/atomic_file.h"
#include "formats/errors.h"
#include "formats/output_paths.h"

namespace moetrace::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  std::string json;
  int threads = 0;
  std::string ranks, steps;
  bool skip_bad_ranks = false;
};

// Exit code when --skip-bad-ranks left ranks out: the JSON is written and
// names them, but a CI step must not mistake it for a full analysis.
constexpr int kSkippedRanksExit = 3;

int RunAnalyze(const AnalyzeArgs& args) {
  return RunOnProcesses([&](Communicator& comm) {
    AnalyzeOptions options;
    options.threads = args.threads;
    OnEveryProcess(comm, [&] {
      if (!args.ranks.empty()) options.selection.ranks = ParseIdList(args.ranks, "--ranks");
      if (!args.steps.empty()) {
        options.selection.steps = ParseIdList(args.steps, "--steps");
        // A step's window ends where the next kept step begins: steps left
        // out between kept ones would be counted in the window before them.
        const auto& s = options.selection.steps;
        if (s.back() - s.front() + 1 != static_cast<int32_t>(s.size())) {
          ThrowInputError("--steps", args.steps, "analyze takes one range of steps (e.g. 2-3)");
        }
      }
    });
    options.skip_bad_ranks = args.skip_bad_ranks;
    options.progress = AnalyzeProgress(comm);
    const analysis::Analysis result = AnalyzeDistributed(args.inputs, options, comm).analysis;
    // Process 0 alone writes; a failure there (a full disk) ends every process.
    OnFirstProcess(comm, [&] {
      // Steps the trace does not have select nothing: a mistake, not an
      // empty analysis (the merged document is whole on this process only).
      if (!options.selection.steps.empty() && result.cluster().steps() == 0) {
        ThrowInputError("--steps", args.steps, "selects no step of the input");
      }
      fmt::print("{}", FormatSummary(result));
      if (!args.json.empty()) {
        AtomicFile file(args.json);
        WriteStableJson(result, [&](std::string_view chunk) { file.Write(chunk); });
        file.Commit();
      }
    });
    return result.skipped_ranks_size() > 0 ? kSkippedRanksExit : 0;
  });
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* sub = app.add_subcommand(
      "analyze", "Compute the metrics that explain a step (shared/docs/METRICS.md)");
  sub->add_option("inputs", args->inputs,
                  ".mtrace, Kineto JSON (.json/.json.gz or a directory), Ascend profiler output")
      ->required();
  sub->add_option("--json", args->json, "Write the analysis document (stable JSON) here");
  sub->add_option("--threads", args->threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(0, 1024));  // 0: all cores
  sub->add_option("--ranks", args->ranks, "Only these rank ids, e.g. 0-7,64");
  sub->add_option("--steps", args->steps, "Only these steps, one range, e.g. 2-3 (a cut step is measured as in the whole trace)");
  sub->add_flag("--skip-bad-ranks", args->skip_bad_ranks,
                "Leave out ranks that fail to read (named in the summary and in "
                "skipped_ranks[]); exit 3 when any was left out");
  Register(sub, [args] {
    CheckOutputPaths(args->inputs, {args->json});
    return RunAnalyze(*args);
  });
}

}  // namespace moetrace::cli
