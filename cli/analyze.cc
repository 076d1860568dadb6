// moetrace analyze INPUT... [--json OUT.json]
#include <fmt/core.h>

#include <algorithm>
#include <future>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/stable_json.h"
#include "analyzer/summary.h"
#include "cli/commands.h"
#include "formats/atomic_file.h"
#include "formats/errors.h"
#include "formats/kineto/kineto_importer.h"
#include "formats/kineto/shared_trace_files.h"
#include "formats/open_trace.h"

namespace moetrace::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  std::string json;
  int threads = 0;
};

int RunAnalyze(const AnalyzeArgs& args) {
  std::vector<std::unique_ptr<TraceSource>> sources;
  std::vector<std::string> kineto;
  for (const std::string& in : args.inputs) {
    // HTA's figures need the raw Kineto rows: computed from the files
    // themselves, next to the importer's trace model.
    if (DetectFormat(in) == TraceFormat::kKineto) kineto.push_back(in);
  }
  // ... on their own thread while the importers and the analysis run, both
  // parsing the same inflated files (each is read and inflated once).
  auto shared = std::make_shared<SharedTraceFiles>(/*readers_per_file=*/2);
  for (const std::string& in : args.inputs) {
    const bool is_kineto = std::find(kineto.begin(), kineto.end(), in) != kineto.end();
    sources.push_back(is_kineto ? OpenKineto(in, shared) : OpenTrace(in));
  }
  // Started once the sources are open: opening (a few small reads) is
  // slowed several times over by page faults of an inflate running beside it.
  std::future<hta::HtaResult> hta_figures;
  if (!kineto.empty()) {
    hta_figures = std::async(std::launch::async,
                             [&kineto, shared] { return hta::ComputeHta(kineto, shared.get()); });
  }
  AnalyzeOptions options;
  options.threads = args.threads;
  const bool tty = isatty(STDERR_FILENO);
  if (tty) {
    options.progress = [](size_t done, size_t total) {
      fmt::print(stderr, "\ranalyzing ranks: {}/{}", done, total);
      if (done == total) fmt::print(stderr, "\r\033[K");
    };
  }
  ConcatSource all(std::move(sources));
  analysis::Analysis result = Analyze(all, options);
  if (hta_figures.valid()) {
    try {
      AddHtaResult(hta_figures.get(), &result);
    } catch (const InputError& e) {
      // Where HTA itself fails to load the set it gives no figures either.
      result.add_hta_errors(e.what());
    }
  }
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
