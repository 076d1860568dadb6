// The entries of a directory in name order (importers that walk profiler
// output folders: the order fixes rank numbering when no file names it).
#pragma once

#include <filesystem>
#include <vector>

namespace moetrace {

// Empty when `dir` cannot be read.
std::vector<std::filesystem::path> SortedChildren(const std::filesystem::path& dir);

}  // namespace moetrace
