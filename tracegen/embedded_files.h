// JSON files compiled into the binary: presets/*.json and hardware/*.json
// (paths relative to tracegen/), so `moetrace` needs no data directory.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace moetrace::tracegen {

const std::vector<std::pair<std::string_view, std::string_view>>& EmbeddedFiles();

}  // namespace moetrace::tracegen
