// moetrace analyze INPUT... [--json OUT.json]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "analyzer/analyze_files.h"
#include "analyzer/stable_json.h"
#include "analyzer/summary.h"
#include "cli/commands.h"
#include "formats/atomic_file.h"

namespace moetrace::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  std::string json;
  int threads = 0;
  std::string ranks, steps;
};

int RunAnalyze(const AnalyzeArgs& args) {
  AnalyzeOptions options;
  options.threads = args.threads;
  if (!args.ranks.empty()) options.selection.ranks = ParseIdList(args.ranks, "--ranks");
  if (!args.steps.empty()) options.selection.steps = ParseIdList(args.steps, "--steps");
  const bool tty = isatty(STDERR_FILENO);
  if (tty) {
    options.progress = [](size_t done, size_t total) {
      fmt::print(stderr, "\ranalyzing ranks: {}/{}", done, total);
      if (done == total) fmt::print(stderr, "\r\033[K");
    };
  }
  const analysis::Analysis result = AnalyzeFiles(args.inputs, options).analysis;
  fmt::print("{}", FormatSummary(result));
  if (!args.json.empty()) WriteFileAtomically(args.json, ToStableJson(result));
  return 0;
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
  sub->add_option("--threads", args->threads, "Worker threads (default: all cores)");
  sub->add_option("--ranks", args->ranks, "Only these rank ids, e.g. 0-7,64");
  sub->add_option("--steps", args->steps, "Only these steps, e.g. 2-3");
  Register(sub, [args] { return RunAnalyze(*args); });
}

}  // namespace moetrace::cli
