// A one-line progress bar on stderr, shown only when stderr is a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace moetrace::cli {

class Progress {
 public:
  Progress(std::string label, size_t total);
  ~Progress();
  void Update(size_t done);  // redraws at most ~10 times a second

 private:
  std::string label_;
  size_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace moetrace::cli
