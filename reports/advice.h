// The advisor's proposals for a report: read back from a document saved by
// `moetrace advise --json` ({"proposals": [...]}, analyzer/advise/advise.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/advise/advise.h"

namespace moetrace {

// Throws InputError naming the file on a document that is not advise's.
std::vector<advise::Proposal> ParseAdviceJson(std::string_view json, std::string_view file);
std::vector<advise::Proposal> LoadAdviceJson(const std::string& path);

}  // namespace moetrace
