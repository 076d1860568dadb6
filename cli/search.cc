// moetrace search (--preset NAME | --config FILE) --cards N [--set KEY=VALUE]...
//   [--space KEY=V1,V2,...]... [--top K] [--verify K] [--json OUT]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "analyzer/search/search.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "formats/atomic_file.h"
#include "formats/output_paths.h"
#include "tracegen/config.h"

namespace moetrace::cli {

void AddSearchCommand(CLI::App& app) {
  struct Args {
    std::string preset, config, json;
    std::vector<std::string> sets, space;
    int cards = 0, top = 10, verify = 3, threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "search", "Search parallel layouts and settings: estimate every one, simulate the best");
  sub->add_option("--preset", args->preset, "run preset (see `moetrace presets`)");
  sub->add_option("--config", args->config, "RunConfig JSON file")->check(CLI::ExistingFile);
  sub->add_option("--cards", args->cards, "number of NPUs")->required()->check(CLI::Range(1, 1000000));
  sub->add_option("--set", args->sets, "override a config key first: dotted.key=value (repeatable)");
  sub->add_option("--space", args->space,
                  "values of one knob, e.g. parallel.tp=4,8 (repeatable; default: all the model allows)");
  sub->add_option("--top", args->top, "layouts to list (default 10)")->check(CLI::Range(1, 100000));
  sub->add_option("--verify", args->verify, "of them, simulated in full (default 3)")
      ->check(CLI::Range(0, 100000));
  sub->add_option("--threads", args->threads, "threads (default: one per core)")->check(CLI::Range(1, 1024));
  sub->add_option("--json", args->json, "write the result as JSON");
  Register(sub, [args]() {
    CheckOutputPaths({args->config}, {args->json});
    if (args->preset.empty() == args->config.empty())
      throw UsageError("search: give exactly one of --preset NAME or --config FILE");
    // The base config as generate builds it (its own layout validated), then
    // the space around it.
    tracegen::RunConfig base = tracegen::BuildConfig({args->preset, args->config, args->sets, 1});
    search::Space space = search::MakeSpace(base, args->cards, args->space);
    search::SearchOptions o;
    o.top = args->top;
    o.verify = args->verify;
    o.threads = args->threads;
    std::unique_ptr<Progress> bar;
    std::string phase;
    o.progress = [&](std::string_view p, int64_t done, int64_t total) {
      if (p != phase) {
        bar.reset();
        phase = std::string(p);
        bar = std::make_unique<Progress>(phase, size_t(total));
      }
      bar->Update(size_t(done));
    };
    search::SearchResult r = search::RunSearch(base, space, o);
    bar.reset();
    const int layers = base.model().num_layers();
    if (r.top.empty()) {
      // Nothing to propose: the reasons, and exit 2 (the space is the input).
      fmt::print("{}", search::SearchText(r, layers));
      throw UsageError("search: no layout of the space fits the model, the cards and memory (the reasons are above)");
    }
    if (!args->json.empty()) WriteFileAtomically(args->json, search::SearchJson(r, layers));
    fmt::print("{}", search::SearchText(r, layers));
    return 0;
  });
}

}  // namespace moetrace::cli
