#include "reports/rl_timeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>

#include "reports/findings.h"

namespace moetrace {

const char* const kRlTasks[10] = {"generate_sequences", "compute_log_prob", "compute_ref_log_prob", "compute_rm_score",
                                  "compute_values",     "update_actor",     "update_critic",        "reshard_to_train",
                                  "reshard_to_infer",   "sync_weights"};

// Colours as attributes, not classes: a report without RL keeps every byte
// of its stylesheet.
const char* const kRlTaskFills[10] = {"#59a14f", "#4e79a7", "#76b7b2", "#edc948", "#b07aa1",
                                      "#e15759", "#ff9da7", "#f28e2b", "#9c755f", "#bab0ac"};

namespace {

int TaskIndex(const std::string& task) {
  for (int i = 0; i < 10; ++i) {
    if (task == kRlTasks[i]) return i;
  }
  return -1;
}

// The roles in the order people read an iteration: who generates, then
// who scores, then who trains.
constexpr const char* kRoleOrder[] = {"rollout", "actor", "ref", "reward", "critic"};

}  // namespace

RlTimeline BuildRlTimeline(const analysis::Rl& rl, size_t max_iterations) {
  RlTimeline t;
  const int n = static_cast<int>(std::min<size_t>(rl.iterations_size(), max_iterations));
  t.more_iterations = static_cast<size_t>(rl.iterations_size() - n);
  // The axis: from the earliest phase (a stale rollout starts before its
  // window) to the last end.
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (int i = 0; i < n; ++i) {
    const analysis::RlIteration& it = rl.iterations(i);
    t0 = std::min(t0, it.start_ns());
    t1 = std::max(t1, it.start_ns() + it.time_ns());
    for (const analysis::RlPhase& p : it.phases()) {
      t0 = std::min(t0, p.start_ns());
      t1 = std::max(t1, p.start_ns() + p.time_ns());
    }
  }
  if (n == 0 || t0 == INT64_MAX) return t;
  const double len = static_cast<double>(std::max<int64_t>(1, t1 - t0));
  auto X = [&](int64_t ns) { return RlTimeline::kX0 + (ns - t0) / len * RlTimeline::kWidth; };
  auto W = [&](int64_t ns) { return std::max(0.5, ns / len * RlTimeline::kWidth); };
  t.duration = FormatDuration(len);

  std::vector<std::string> roles;
  for (const char* r : kRoleOrder) {
    for (int i = 0; i < n; ++i) {
      for (const analysis::RlPhase& p : rl.iterations(i).phases()) {
        if (p.role() == r && std::find(roles.begin(), roles.end(), r) == roles.end()) roles.push_back(r);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    for (const analysis::RlPhase& p : rl.iterations(i).phases()) {
      if (std::find(roles.begin(), roles.end(), p.role()) == roles.end()) roles.push_back(p.role());
    }
  }
  for (size_t r = 0; r < roles.size(); ++r) t.lanes.push_back({roles[r], 4 + r * RlTimeline::kLaneStep, {}});
  auto lane = [&](const std::string& role) -> RlLane& {
    return t.lanes[std::find(roles.begin(), roles.end(), role) - roles.begin()];
  };

  bool drawn[11] = {};
  for (int i = 0; i < n; ++i) {
    const analysis::RlIteration& it = rl.iterations(i);
    t.marks.push_back({X(it.start_ns()), fmt::format("it {}", it.iteration())});
    for (const analysis::RlPhase& p : it.phases()) {
      const int k = TaskIndex(p.task());
      drawn[k < 0 ? 10 : k] = true;
      lane(p.role()).boxes.push_back(
          {X(p.start_ns()), W(p.time_ns()), k < 0 ? std::string("rl-tx") : fmt::format("rl-t{}", k),
           k < 0 ? kRlOtherFill : kRlTaskFills[k],
           fmt::format("iteration {} {}/{}: {} on {} card{}, {} card-time", it.iteration(), p.role(), p.task(),
                       FormatDuration(double(p.time_ns())), p.cards(), p.cards() == 1 ? "" : "s",
                       FormatDuration(double(p.card_ns())))});
      // Long-tail idle is card-time (analysis.proto): over the rollout's
      // cards it is the mean time a card sat done before the longest
      // response ended, drawn over the end of the rollout box.
      if (p.task() == kRlTasks[0] && it.long_tail_idle_card_ns() > 0 && p.cards() > 0) {
        const int64_t idle = std::min<int64_t>(it.long_tail_idle_card_ns() / p.cards(), p.time_ns());
        const int64_t end = p.start_ns() + p.time_ns();
        lane(p.role()).boxes.push_back(
            {X(end - idle), W(idle), "rl-idle", kRlIdleFill,
             fmt::format("iteration {} long-tail idle: {} card-time, {} per rollout card on average", it.iteration(),
                         FormatDuration(double(it.long_tail_idle_card_ns())), FormatDuration(double(idle)))});
      }
    }
  }
  for (int k = 0; k < 10; ++k) {
    if (drawn[k]) t.legend.push_back({fmt::format("rl-t{}", k), kRlTaskFills[k], kRlTasks[k]});
  }
  if (drawn[10]) t.legend.push_back({"rl-tx", kRlOtherFill, "other task"});
  t.height = 4 + roles.size() * RlTimeline::kLaneStep + 16;
  return t;
}

}  // namespace moetrace
