#include "cli/recorded_model_options.h"

#include "cli/commands.h"
#include "tracegen/config.h"

namespace moetrace::cli {

void AddModelOptions(CLI::App* sub, ModelArgs* model) {
  sub->add_option("--config", model->config,
                  "the model, cluster and layout of a recorded trace: a RunConfig JSON as `generate "
                  "--config` reads; its layout is searched (a model-based proposal)")
      ->check(CLI::ExistingFile);
  sub->add_option("--preset", model->preset, "the same from a run preset (see `moetrace presets`)");
  sub->add_option("--set", model->sets, "override a key of --config / --preset: dotted.key=value (repeatable)");
}

std::optional<tracegen::RunConfig> BuildModel(const ModelArgs& model, std::string_view command) {
  if (!model.preset.empty() && !model.config.empty())
    throw UsageError(std::string(command) + ": give one of --preset NAME or --config FILE, not both");
  if (!model.sets.empty() && model.preset.empty() && model.config.empty())
    throw UsageError(std::string(command) + ": --set changes the model of --preset or --config; give one of them");
  if (model.preset.empty() && model.config.empty()) return std::nullopt;
  // Checked before any trace is read: a bad key or layout is exit 2 at once.
  return tracegen::BuildConfig({model.preset, model.config, model.sets, 1});
}

}  // namespace moetrace::cli
