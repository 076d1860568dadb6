// The text both reports show for RL post-training (analysis.rl): the job
// figures, then per iteration its phases. Plain text: each renderer
// escapes it its own way (task, role and placement come from the trace).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

struct RlFigure {
  std::string label;   // "Steady-state iteration"
  std::string value;   // "12.345 s"
  std::string detail;  // "median window of the iterations after the first"
};

struct RlIterationRows {
  int32_t iteration = 0;
  std::string summary;  // window, utilisation, long-tail idle, switch, staleness, tokens
  // task, role, start (from the window start), span, share, cards, card-time
  static constexpr std::array<const char*, 7> kHeader = {"task", "role", "starts at", "span", "share", "cards",
                                                         "card-time"};
  std::vector<std::array<std::string, 7>> phases;  // in the analysis' order
};

struct RlRows {
  std::vector<RlFigure> figures;
  std::vector<RlIterationRows> iterations;  // the first max_iterations
  size_t more_iterations = 0;               // left out
};

// Empty when !rl.present().
RlRows BuildRlRows(const analysis::Rl& rl, size_t max_iterations);

}  // namespace moetrace
