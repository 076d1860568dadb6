// moetrace analyze INPUT... [--json OUT.json]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "analyzer/analyze_files.h"
#include "analyzer/distributed.h"
#include "analyzer/mpi/communicator.h"
#include "analyzer/stable_json.h"
#include "analyzer/summary.h"
#include "cli/commands.h"
#include "formats/atomic_file.h"
#include "formats/errors.h"

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
  // Under mpirun: MPI until this returns (or throws); otherwise one process.
  std::unique_ptr<Communicator> comm = WorldCommunicator();
  AnalyzeOptions options;
  options.threads = args.threads;
  if (!args.ranks.empty()) options.selection.ranks = ParseIdList(args.ranks, "--ranks");
  if (!args.steps.empty()) options.selection.steps = ParseIdList(args.steps, "--steps");
  options.skip_bad_ranks = args.skip_bad_ranks;
  const bool tty = isatty(STDERR_FILENO) && comm->rank() == 0;
  if (tty) {
    options.progress = [](size_t done, size_t total) {
      fmt::print(stderr, "\ranalyzing ranks: {}/{}", done, total);
      if (done == total) fmt::print(stderr, "\r\033[K");
    };
  }
  if (comm->size() == 1) {
    const analysis::Analysis result = AnalyzeFiles(args.inputs, options).analysis;
    fmt::print("{}", FormatSummary(result));
    if (!args.json.empty()) WriteFileAtomically(args.json, ToStableJson(result));
    return result.skipped_ranks_size() > 0 ? kSkippedRanksExit : 0;
  }
  // mpirun ends the whole job as soon as one process exits non-zero: process
  // 0 reports the failure, then every process meets once more before any
  // exits (each failed the same agreement, so each gets here).
  auto fail = [&](const std::string& message) {
    if (comm->rank() == 0) fmt::print(stderr, "moetrace: error: {}\n", message);
    comm->AllReduceMax(0);
    return 2;
  };
  analysis::Analysis result;
  try {
    result = AnalyzeDistributed(args.inputs, options, *comm);
    // Process 0 alone writes; a failure there (a full disk) ends every process.
    std::string error;
    if (comm->rank() == 0 && !args.json.empty()) {
      try {
        WriteFileAtomically(args.json, ToStableJson(result));
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    AgreeOnError(*comm, error);
  } catch (const InputError& e) {
    return fail(e.what());
  } catch (const PeerFailed&) {
    return fail("");
  }
  // The others exit 0 (quietly): process 0's code is mpirun's.
  if (comm->rank() != 0) return 0;
  fmt::print("{}", FormatSummary(result));
  return result.skipped_ranks_size() > 0 ? kSkippedRanksExit : 0;
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
  sub->add_flag("--skip-bad-ranks", args->skip_bad_ranks,
                "Leave out ranks that fail to read (named in the summary and in "
                "skipped_ranks[]); exit 3 when any was left out");
  Register(sub, [args] { return RunAnalyze(*args); });
}

}  // namespace moetrace::cli
