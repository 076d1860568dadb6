#include "cli/commands.h"

#include <utility>
#include <vector>

namespace moetrace::cli {
namespace {

std::vector<std::pair<CLI::App*, std::function<int()>>>& Registry() {
  static std::vector<std::pair<CLI::App*, std::function<int()>>> r;
  return r;
}

}  // namespace

void Register(CLI::App* sub, std::function<int()> run) {
  Registry().emplace_back(sub, std::move(run));
}

void AddCommands(CLI::App& app) {
  // In the order of the workflow: generate, inspect, analyse.
  AddPresetsCommand(app);
  AddGenerateCommand(app);
  AddConvertCommand(app);
  AddGateCommand(app);
  AddInfoCommand(app);
  AddAnalyzeCommand(app);
  AddReportCommand(app);
  AddAdviseCommand(app);
  AddReplayCommand(app);
  AddSearchCommand(app);
  AddDiffCommand(app);
}

int RunSelected(CLI::App& app) {
  for (auto& [sub, run] : Registry()) {
    if (sub->parsed()) return run();
  }
  return 2;
}

}  // namespace moetrace::cli
