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
};

int RunAnalyze(const AnalyzeArgs& args) {
  AnalyzeOptions options;
  options.threads = args.threads;
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
  Register(sub, [args] { return RunAnalyze(*args); });
}

}  // namespace moetrace::cli
