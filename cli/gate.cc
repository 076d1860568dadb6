// moetrace gate INPUT... --baseline BASE.json [--thresholds FILE] [--junit OUT.xml] [--md OUT.md]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/distributed.h"
#include "analyzer/gate.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "formats/atomic_file.h"
#include "formats/output_paths.h"
#include "reports/inputs.h"

namespace moetrace::cli {
namespace {

struct GateArgs {
  std::vector<std::string> inputs;
  std::string baseline, thresholds, junit, md;
  int threads = 0;
};

int RunGateCommand(const GateArgs& args) {
  return RunOnProcesses([&](Communicator& comm) {
    // Bad thresholds or baseline: exit 2 before the (long) analysis.
    std::vector<GateThreshold> thresholds;
    analysis::Analysis baseline;
    OnFirstProcess(comm, [&] {
      thresholds = args.thresholds.empty() ? DefaultGateThresholds()
                                           : LoadGateThresholds(args.thresholds);
      // On every core, in slices (analyzer/split_analysis_json.h), as diff
      // parses a saved side before a trace.
      baseline = LoadAnalysisJson(args.baseline, args.threads);
    });
    const LoadedInputs current = LoadInputs(args.inputs, args.threads, AnalyzeProgress(comm), comm);
    int rc = 0;
    OnFirstProcess(comm, [&] {
      const GateResult result = RunGate(baseline, current.analysis, thresholds);
      fmt::print("{}", FormatGateTable(result));
      if (!args.junit.empty()) WriteFileAtomically(args.junit, GateJUnitXml(result));
      if (!args.md.empty()) WriteFileAtomically(args.md, GateMarkdown(result));
      rc = result.regressed() ? 1 : 0;
    });
    return rc;
  });
}

}  // namespace

void AddGateCommand(CLI::App& app) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* sub = app.add_subcommand(
      "gate", "Fail (exit 1) when a metric regressed against a baseline saved by `analyze --json`");
  sub->add_option("inputs", args->inputs, "Traces, or one document saved by `analyze --json`")
      ->required();
  sub->add_option("--baseline", args->baseline, "Baseline analysis (`analyze --json` output)")
      ->required();
  sub->add_option("--thresholds", args->thresholds,
                  "Thresholds file (TOML, analyzer/GATE.md); default: the built-in set");
  sub->add_option("--junit", args->junit, "Write JUnit XML (one testcase per metric) here");
  sub->add_option("--md", args->md, "Write a Markdown table for a pull-request comment here");
  sub->add_option("--threads", args->threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(0, 1024));  // 0: all cores
  Register(sub, [args] {
    std::vector<std::string> in = args->inputs;
    in.push_back(args->baseline);
    in.push_back(args->thresholds);
    CheckOutputPaths(in, {args->junit, args->md});
    return RunGateCommand(*args);
  });
}

}  // namespace moetrace::cli
