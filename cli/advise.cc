// moetrace advise INPUT... [--json OUT.json]
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/advise/advise.h"
#include "analyzer/analyze.h"
#include "cli/commands.h"
#include "formats/atomic_file.h"

namespace moetrace::cli {

Trace ReadInputs(const std::vector<std::string>& inputs);  // cli/replay.cc

void AddAdviseCommand(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string json;
    bool no_replay = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "advise", "Propose corrective settings, each with its gain predicted by replay");
  sub->add_option("inputs", args->inputs, "trace(s): .mtrace, Kineto JSON, Ascend output")->required();
  sub->add_option("--json", args->json, "write {\"proposals\": [...]}, best predicted gain first");
  sub->add_flag("--no-replay", args->no_replay, "skip the replays (no predicted effects)");
  Register(sub, [args]() {
    Trace trace = ReadInputs(args->inputs);
    analysis::Analysis a;
    {
      MemorySource source(trace);
      a = Analyze(source);
    }
    advise::AdviseOptions options;
    options.replay = !args->no_replay;
    std::vector<advise::Proposal> proposals = advise::Advise(trace, a, options);
    fmt::print("{}", advise::FormatProposals(proposals));
    if (!args->json.empty()) WriteFileAtomically(args->json, advise::ProposalsJson(proposals));
    return 0;
  });
}

}  // namespace moetrace::cli
