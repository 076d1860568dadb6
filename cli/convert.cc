// moetrace convert INPUT... -o OUT   (OUT type from its extension)
#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/progress.h"
#include "formats/open_trace.h"

namespace moetrace::cli {
namespace {

struct ConvertOptions {
  std::vector<std::string> inputs;
  std::string output;
};

int RunConvert(const ConvertOptions& o) {
  std::unique_ptr<TraceSink> sink = CreateSink(o.output);
  Metadata merged;
  size_t ranks = 0;
  for (size_t k = 0; k < o.inputs.size(); ++k) {
    std::unique_ptr<TraceSource> source = OpenTrace(o.inputs[k]);
    if (k == 0) merged = source->metadata();
    Progress progress("converting " + o.inputs[k], source->rank_count());
    for (size_t i = 0; i < source->rank_count(); ++i) {
      sink->AddRank(source->ReadRank(i));
      progress.Update(i + 1);
    }
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
  Register(sub, [o] { return RunConvert(*o); });
}

}  // namespace moetrace::cli
