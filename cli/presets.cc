// moetrace presets: one line per run preset.
#include <fmt/core.h>

#include "cli/commands.h"
#include "tracegen/config.h"

namespace moetrace::cli {

void AddPresetsCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("presets", "List the generate presets");
  Register(sub, []() {
    for (const auto& p : tracegen::ListPresets()) fmt::print("{:<24} {}\n", p.name, p.description);
    return 0;
  });
}

}  // namespace moetrace::cli
