// Output paths are checked before a command does its work: a run of
// minutes must not end in a refused write, and an output must never
// replace one of the inputs it was computed from.
#pragma once

#include <string>
#include <vector>

namespace moetrace {

// Throws InputError naming the output when its directory does not exist or
// is not a directory, or when it is the same file as an input (same device
// and inode, however the paths are spelt). Empty outputs are skipped; an
// output ending in '/' is a directory to write into (`convert -o DIR/`).
void CheckOutputPaths(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

}  // namespace moetrace
