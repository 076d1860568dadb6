// --config FILE | --preset NAME [--set KEY=VALUE]...: the model of a
// recorded trace, for the commands that run the advisor (advise, report):
// analyzer/advise/recorded_model.h.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegen/proto/run_config.pb.h"

namespace moetrace::cli {

struct ModelArgs {
  std::string preset, config;
  std::vector<std::string> sets;
};

void AddModelOptions(CLI::App* sub, ModelArgs* model);

// std::nullopt without --preset / --config; the configuration built and
// validated as `generate` builds it otherwise (InputError naming the key).
// UsageError for both at once, or --set without either.
std::optional<tracegen::RunConfig> BuildModel(const ModelArgs& model, std::string_view command);

}  // namespace moetrace::cli
