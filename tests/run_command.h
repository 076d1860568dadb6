// Runs the moetrace binary in end-to-end tests.
#pragma once

#include <string>

namespace moetrace::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs `moetrace ARGS` through the shell (ARGS is shell syntax).
CommandResult RunMoetrace(const std::string& args);
// A fresh empty directory under the test temp dir.
std::string TempDir(const std::string& name);
std::string ReadFile(const std::string& path);
// ../shared/traces, or $MOETRACE_REAL_TRACES; empty when absent.
std::string RealTracesDir();

}  // namespace moetrace::testing
