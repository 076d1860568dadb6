#include "formats/output_paths.h"

#include <filesystem>
#include <system_error>

#include "formats/errors.h"

namespace moetrace {

void CheckOutputPaths(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  namespace fs = std::filesystem;
  for (const std::string& out : outputs) {
    if (out.empty()) continue;
    std::string file = out;
    while (file.size() > 1 && file.back() == '/') file.pop_back();
    fs::path dir = fs::path(file).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!fs::exists(dir, ec)) ThrowInputError(out, "", "directory '" + dir.string() + "' does not exist");
    if (!fs::is_directory(dir, ec)) ThrowInputError(out, "", "'" + dir.string() + "' is not a directory");
    for (const std::string& in : inputs) {
      if (in.empty()) continue;
      std::error_code eq;
      if (fs::equivalent(fs::path(file), fs::path(in), eq) && !eq) {
        ThrowInputError(out, "", "is also an input (" + in + "); write the output elsewhere");
      }
    }
  }
}

}  // namespace moetrace
