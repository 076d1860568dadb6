// moetrace advise INPUT... [--json OUT.json] [--no-replay] [--no-layout] [--threads N]
//   [--config FILE | --preset NAME] [--set KEY=VALUE]...
#include <fmt/core.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "analyzer/distributed.h"
#include "analyzer/replay/replay_input.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/recorded_model_options.h"
#include "formats/atomic_file.h"
#include "formats/output_paths.h"

namespace moetrace::cli {

// cli/replay.cc
replay::ReplayInput ReadReplayInputs(const std::vector<std::string>& inputs,
                                     const std::string& reduce, Communicator& comm, int threads);
void AddReduceOption(CLI::App* sub, std::string* reduce);

void AddAdviseCommand(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string json, reduce = "auto";
    ModelArgs model;
    bool no_replay = false, no_layout = false;
    int threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "advise", "Propose corrective settings, each with its gain predicted by replay");
  sub->add_option("inputs", args->inputs, "trace(s): .mtrace, Kineto JSON, Ascend output")->required();
  sub->add_option("--json", args->json, "write {\"proposals\": [...]}, best predicted gain first");
  sub->add_flag("--no-replay", args->no_replay, "skip the replays (no predicted effects)");
  sub->add_flag("--no-layout", args->no_layout,
                "skip the layout search of tracegen traces and of --config / --preset (its "
                "estimates take seconds, each verification a full simulation of every rank)");
  sub->add_option("--threads", args->threads,
                  "Replays at once and the layout search's threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  AddModelOptions(sub, &args->model);
  AddReduceOption(sub, &args->reduce);
  Register(sub, [args]() {
    CheckOutputPaths(args->inputs, {args->json});
    // The recorded trace's model (exit 2 on a bad one before any trace is read).
    const std::optional<tracegen::RunConfig> model = BuildModel(args->model, "advise");
    return RunOnProcesses([&](Communicator& comm) {
      const replay::ReplayInput in = ReadReplayInputs(args->inputs, args->reduce, comm, args->threads);
      // The rules and their replays on process 0 (the others wait, then exit 0).
      OnFirstProcess(comm, [&] {
        advise::AdviseOptions options;
        options.replay = !args->no_replay;
        options.layout = !args->no_layout;
        options.threads = args->threads;
        if (model) options.model = &*model;
        if (in.roles) options.roles = &*in.roles;
        std::vector<advise::Proposal> dropped;
        options.dropped = &dropped;
        std::vector<advise::Proposal> proposals = advise::Advise(in.trace, in.before, options);
        fmt::print("{}{}", advise::FormatProposals(proposals), advise::FormatDropped(dropped));
        if (!args->json.empty()) WriteFileAtomically(args->json, advise::ProposalsJson(proposals));
      });
      return 0;
    });
  });
}

}  // namespace moetrace::cli
