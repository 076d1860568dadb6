// Geometry of the HTML report's RL phase timeline (a Gantt chart): one
// lane per role, the iterations side by side on one time axis, a box per
// phase coloured by task, and each iteration's long-tail idle drawn over
// the end of its rollout box. Coordinates in SVG user units; names are
// plain text (escaped by the renderer).
#pragma once

#include <string>
#include <vector>

#include "analyzer/proto/analysis.pb.h"

namespace moetrace {

struct RlBox {
  double x = 0, w = 0;
  std::string cls;    // "rl-t0".."rl-t9" by task, "rl-tx" another task, "rl-idle" long-tail idle
  std::string fill;   // its colour, "#59a14f" (the page has no stylesheet rule for these)
  std::string title;  // tooltip: iteration, role/task, span, cards
};

struct RlLane {
  std::string role;
  double y = 0;
  std::vector<RlBox> boxes;
};

struct RlMark {  // an iteration window's start
  double x = 0;
  std::string label;  // "it 3"
};

struct RlLegendItem {
  std::string cls, fill, task;
};

struct RlTimeline {
  static constexpr double kX0 = 110, kWidth = 960, kLaneHeight = 20, kLaneStep = 26;
  std::vector<RlLane> lanes;  // rollout, actor, ref, reward, critic, then other roles by first appearance
  std::vector<RlMark> marks;
  std::vector<RlLegendItem> legend;  // the tasks drawn, in kTasks order then others
  std::string duration;              // the axis' length
  double height = 0;
  size_t more_iterations = 0;  // beyond max_iterations, not drawn
};

// The tasks with their own colour (tracegen/rl/README.md's names), in
// the order of "rl-t0".."rl-t9", and the colours.
extern const char* const kRlTasks[10];
extern const char* const kRlTaskFills[10];
inline constexpr const char kRlOtherFill[] = "#79706e";
inline constexpr const char kRlIdleFill[] = "#ffffff";

// Empty lanes when the analysis has no RL phases.
RlTimeline BuildRlTimeline(const analysis::Rl& rl, size_t max_iterations);

}  // namespace moetrace
