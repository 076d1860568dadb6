// One prefix test for the importers (they had a file-local copy each, which
// collide when CI compiles several files as one unity translation unit).
#pragma once

#include <string_view>

namespace moetrace {

inline bool StartsWith(std::string_view s, std::string_view p) { return s.starts_with(p); }

}  // namespace moetrace
