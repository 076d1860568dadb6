// moetrace replay INPUT... --set KEY=VALUE... [-o OUT.mtrace] [--json OUT.json]
#include <fmt/core.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/replay/replay.h"
#include "cli/commands.h"
#include "formats/atomic_file.h"
#include "formats/open_trace.h"

namespace moetrace::cli {

// Reads every input into one in-memory trace (ranks in input order; the
// metadata of the first). Replay and advise need all ranks together.
Trace ReadInputs(const std::vector<std::string>& inputs) {
  Trace all;
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::unique_ptr<TraceSource> src = OpenTrace(inputs[k]);
    if (k == 0) all.metadata = src->metadata();
    for (size_t i = 0; i < src->rank_count(); ++i) all.ranks.push_back(src->ReadRank(i));
  }
  return all;
}

void AddReplayCommand(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs, sets;
    std::string out, json, method = "auto";
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "replay", "Predict a trace under changed settings (speed.<class>=F, host.dispatch_factor=F, "
                "sync.remove=NAME, slow_rank.fix=R, micro_batch.scale=K, RunConfig keys: regenerated on tracegen traces, "
                "graph transforms otherwise)");
  sub->add_option("inputs", args->inputs, "trace(s): .mtrace, Kineto JSON, Ascend output")->required();
  sub->add_option("--set", args->sets, "modification KEY=VALUE (repeatable)");
  sub->add_option("-o,--output", args->out, "write the predicted trace (.mtrace, .pftrace, .json)");
  sub->add_option("--json", args->json, "write before/after step times and the predicted analysis");
  sub->add_option("--method", args->method,
                  "auto (regenerate tracegen traces), graph (transform the recorded events, never "
                  "regenerate), regenerate")
      ->check(CLI::IsMember({"auto", "graph", "regenerate"}));
  Register(sub, [args]() {
    Trace trace = ReadInputs(args->inputs);
    replay::ReplayOptions options;
    replay::ParseReplayMethod(args->method, &options.method);
    replay::ReplayResult r = replay::Replay(trace, args->sets, nullptr, options);
    fmt::print("{}", replay::FormatReplay(r));
    if (!args->json.empty()) WriteFileAtomically(args->json, replay::ReplayJson(r));
    if (!args->out.empty()) {
      auto sink = CreateSink(args->out);
      for (const Rank& rank : r.predicted.ranks) sink->AddRank(rank);
      Metadata m = r.predicted.metadata;
      m.attributes.emplace_back("replay.modifications", fmt::format("{}", fmt::join(args->sets, " ")));
      sink->Finish(m);
    }
    return 0;
  });
}

}  // namespace moetrace::cli
