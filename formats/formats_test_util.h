// Helpers shared by the format tests. One definition here rather than a copy
// per file: CI builds the test binaries as unity files (several .cc in one
// translation unit), where file-local copies of one name collide.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "formats/errors.h"
#include "formats/trace.h"

namespace moetrace::testing_formats {

// The import statistic `key` of a rank (0 when the importer never counted it).
inline int64_t Stat(const Rank& r, std::string_view key) {
  for (const auto& [k, v] : r.import_stats) {
    if (k == key) return v;
  }
  return 0;
}

// A whole file's bytes ("" when it cannot be read).
inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The InputError message `f` throws, or "no error".
std::string ErrorOf(auto&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace moetrace::testing_formats
