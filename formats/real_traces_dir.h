// Where tests and benchmarks find the real recorded traces: the directory
// $MOETRACE_REAL_TRACES names, else MOETRACE_TRACES_DIR (shared/traces next
// to the source tree; CMake defines it for test and bench targets only).
#pragma once

#include <cstdlib>
#include <string>

namespace moetrace {

inline std::string RealTracesRoot() {
  const char* env = std::getenv("MOETRACE_REAL_TRACES");
  return env && *env ? env : MOETRACE_TRACES_DIR;
}

}  // namespace moetrace
