// Each subcommand lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>

namespace moetrace::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A subcommand: its CLI11 app and what runs it (returns the exit code).
void Register(CLI::App* sub, std::function<int()> run);
void AddCommands(CLI::App& app);
int RunSelected(CLI::App& app);

// One Add*Command per subcommand file.
void AddInfoCommand(CLI::App& app);
void AddConvertCommand(CLI::App& app);
void AddAnalyzeCommand(CLI::App& app);
void AddGenerateCommand(CLI::App& app);
void AddPresetsCommand(CLI::App& app);
void AddGateCommand(CLI::App& app);
void AddReportCommand(CLI::App& app);
void AddReplayCommand(CLI::App& app);
void AddAdviseCommand(CLI::App& app);
void AddSearchCommand(CLI::App& app);
void AddDiffCommand(CLI::App& app);

}  // namespace moetrace::cli
