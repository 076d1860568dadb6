#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace moetrace::cli {

Progress::Progress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) && total > 1) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void Progress::Update(size_t done) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * done / total_);
  std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu", label_.c_str(), filled,
               "##############################", kWidth - filled, "", done, total_);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace moetrace::cli
