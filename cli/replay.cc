// moetrace replay INPUT... --set KEY=VALUE... [-o OUT.mtrace] [--json OUT.json]
#include <fmt/core.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/distributed.h"
#include "analyzer/replay/replay.h"
#include "analyzer/replay/replay_input.h"
#include "cli/commands.h"
#include "cli/processes.h"
#include "formats/atomic_file.h"
#include "formats/open_trace.h"
#include "formats/output_paths.h"

namespace moetrace::cli {

// Opens every input as one source (ranks in input order; the metadata of the
// first), then reads what the replay needs (replay_input.h): the analysis of
// every rank, streamed, and the whole trace or one representative per role.
// Collective: under mpirun the analysis is shared by the processes and
// process 0 alone gets the input (the others an empty one). `threads`: the
// analysis's and the signing pass's (--threads; 0 = every core).
replay::ReplayInput ReadReplayInputs(const std::vector<std::string>& inputs,
                                     const std::string& reduce, Communicator& comm, int threads) {
  std::unique_ptr<TraceSource> source;
  OnEveryProcess(comm, [&] {
    std::vector<std::unique_ptr<TraceSource>> parts;
    for (const std::string& in : inputs) parts.push_back(OpenTrace(in));
    source = std::make_unique<ConcatSource>(std::move(parts));
  });
  replay::Reduce r = replay::Reduce::kAuto;
  replay::ParseReduce(reduce, &r);
  AnalyzeOptions options;
  options.threads = threads;
  return replay::LoadReplayInput(*source, r, comm, options);
}

void AddReduceOption(CLI::App* sub, std::string* reduce) {
  sub->add_option("--reduce", *reduce,
                  "auto (one representative per role above 10M events), roles, whole")
      ->check(CLI::IsMember({"auto", "roles", "whole"}));
}

void AddReplayCommand(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs, sets;
    std::string out, json, method = "auto", reduce = "auto";
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
  AddReduceOption(sub, &args->reduce);
  Register(sub, [args]() {
    CheckOutputPaths(args->inputs, {args->out, args->json});
    return RunOnProcesses([&](Communicator& comm) {
      // A bad graph modification is refused before the input is read (on the
      // 718B trace the read takes 7 s and 2.5 GB).
      OnEveryProcess(comm, [&] {
        replay::GraphModifications unused;
        replay::SplitSets(args->sets, &unused);
      });
      const replay::ReplayInput in = ReadReplayInputs(args->inputs, args->reduce, comm, 0);
      // The replay itself on process 0 (the others wait, then exit 0).
      OnFirstProcess(comm, [&] {
        replay::ReplayOptions options;
        replay::ParseReplayMethod(args->method, &options.method);
        if (in.roles) options.roles = &*in.roles;
        replay::ReplayResult r = replay::Replay(in.trace, args->sets, &in.before, options);
        fmt::print("{}", replay::FormatReplay(r));
        if (!args->json.empty()) WriteFileAtomically(args->json, replay::ReplayJson(r));
        if (!args->out.empty()) {
          auto sink = CreateSink(args->out);
          for (const Rank& rank : r.predicted.ranks) sink->AddRank(rank);
          Metadata m = r.predicted.metadata;
          m.attributes.emplace_back("replay.modifications",
                                    fmt::format("{}", fmt::join(args->sets, " ")));
          sink->Finish(m);
        }
      });
      return 0;
    });
  });
}

}  // namespace moetrace::cli
