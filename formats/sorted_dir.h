// Directory helpers of the importers that walk profiler output folders.
#pragma once

#include <filesystem>
#include <vector>

namespace moetrace {

// The entries of `dir` in name order (the order fixes rank numbering when
// no file names it); empty when it cannot be read.
std::vector<std::filesystem::path> SortedChildren(const std::filesystem::path& dir);
// Without throwing: false when `p` cannot be looked at.
bool IsFile(const std::filesystem::path& p);
bool IsDir(const std::filesystem::path& p);

}  // namespace moetrace
