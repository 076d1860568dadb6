// moetrace generate: run the tracegen model and write the trace.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/progress.h"
#include "formats/open_trace.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::cli {

void AddGenerateCommand(CLI::App& app) {
  struct Args {
    std::string preset, config, ranks, out;
    std::vector<std::string> sets;
    int steps = 0;
    int threads = 0;
    bool timings = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("generate", "Simulate MoE training on Ascend+Kunpeng and write its trace");
  sub->add_option("--preset", args->preset, "run preset (see `moetrace presets`)");
  sub->add_option("--config", args->config, "RunConfig JSON file")->check(CLI::ExistingFile);
  sub->add_option("--set", args->sets, "override a config key: dotted.key=value (repeatable)");
  sub->add_option("--steps", args->steps, "training steps to simulate")->check(CLI::Range(1, 10000));
  sub->add_option("--ranks", args->ranks, "ranks to write: list or ranges, e.g. 0-7,64 (default all)");
  sub->add_option("--threads", args->threads,
                  "threads emitting ranks (default: one per core); the output is the same for any count")
      ->check(CLI::Range(1, 1024));
  sub->add_flag("--timings", args->timings, "print the time spent per phase to stderr");
  sub->add_option("-o,--output", args->out, "output trace (.mtrace, .pftrace, .json)")->required();
  Register(sub, [args]() {
    if (args->preset.empty() == args->config.empty())
      throw UsageError("generate: give exactly one of --preset NAME or --config FILE");
    tracegen::RunConfig config =
        tracegen::BuildConfig({args->preset, args->config, args->sets, args->steps});
    std::vector<int32_t> ranks;
    if (!args->ranks.empty())
      ranks = tracegen::ParseRankSpec(args->ranks, config.parallel().world_size());
    auto sink = CreateSink(args->out);
    const size_t total = ranks.empty() ? size_t(config.parallel().world_size()) : ranks.size();
    tracegen::GenerateSummary s;
    {
      Progress bar("generating", total);  // called in rank order, on this thread
      s = tracegen::Generate(config, ranks, *sink, [&bar](int done, int) { bar.Update(size_t(done)); },
                             args->threads);
    }
    for (const auto& w : s.warnings) fmt::print(stderr, "moetrace: warning: {}\n", w);
    if (args->timings) {
      const auto& t = s.times;
      fmt::print(stderr,
                 "generate: {} ranks, {} events, {:.2f} s wall, {:.2f} s CPU; pass 1 {:.2f} s wall, "
                 "{:.2f} s CPU; CPU summed over threads: pass 2 {:.2f} s, labels {:.2f} s, "
                 "encode {:.2f} s, writer {:.2f} s ({:.2f} s wall)\n",
                 s.ranks, s.events, t.total, t.total_cpu, t.simulate, t.simulate_cpu, t.emit,
                 t.labels, t.encode, t.write, t.write_wall);
    }
    return 0;
  });
}

}  // namespace moetrace::cli
