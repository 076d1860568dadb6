// moetrace convert INPUT... -o OUT   (OUT type from its extension)
#include <fmt/core.h>

#include <algorithm>
#include <thread>

#include "cli/commands.h"
#include "cli/processes.h"
#include "cli/progress.h"
#include "formats/open_trace.h"
#include "formats/ordered_ranks.h"
#include "formats/trace_selection.h"

namespace moetrace::cli {
namespace {

struct ConvertOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string ranks, steps, window;
  int threads = 0;
};

int RunConvert(const ConvertOptions& o) {
  TraceSelection selection;
  if (!o.ranks.empty()) selection.ranks = ParseIdList(o.ranks, "--ranks");
  if (!o.steps.empty()) selection.steps = ParseIdList(o.steps, "--steps");
  if (!o.window.empty()) ParseWindow(o.window, &selection);
  const size_t threads =
      o.threads > 0 ? size_t(o.threads) : std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<TraceSink> sink = CreateSink(o.output);
  Metadata merged;
  size_t ranks = 0;
  for (size_t k = 0; k < o.inputs.size(); ++k) {
    std::unique_ptr<TraceSource> source = SelectFrom(OpenTrace(o.inputs[k]), selection);
    if (k == 0) merged = source->metadata();
    Progress progress("converting " + o.inputs[k], source->rank_count());
    // Ranks are read (and cut) on worker threads while this one writes them
    // in order.
    ForEachRankInOrder(*source, threads, 2 * threads, [&](size_t i, const Rank& rank) {
      sink->AddRank(rank);
      progress.Update(i + 1);
    });
    ranks += source->rank_count();
  }
  sink->Finish(merged);
  fmt::print(stderr, "wrote {} ({} ranks)\n", o.output, ranks);
  return 0;
}

}  // namespace

void AddConvertCommand(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* sub = app.add_subcommand(
      "convert", "Convert traces: .mtrace (native), .pftrace (Perfetto), .json (Chrome JSON)");
  sub->add_option("inputs", o->inputs, "Input traces (merged rank by rank)")->required();
  sub->add_option("-o,--output", o->output, "Output file; its type follows the extension")
      ->required();
  sub->add_option("--ranks", o->ranks, "Only these rank ids, e.g. 0-7,64");
  sub->add_option("--steps", o->steps, "Only the events of these steps, e.g. 2-3");
  sub->add_option("--window", o->window,
                  "Only events overlapping FROM:TO, absolute times as `info` prints them "
                  "(ns; or with a unit: 1704161511.42s:1704161511.43s)");
  sub->add_option("--threads", o->threads, "Reader threads (default: all cores)");
  Register(sub, [o] { return RunOnFirstProcess([&] { return RunConvert(*o); }); });
}

}  // namespace moetrace::cli
