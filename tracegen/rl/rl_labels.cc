#include "tracegen/rl/rl_labels.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

namespace moetrace::tracegen::rl {

std::vector<LabeledValue> PlanLabels(const Plan& plan) {
  const int iterations = static_cast<int>(plan.generated_tokens.size());
  constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max();
  struct TaskAgg {
    TimeNs first = kMax, last = 0, card_ns = 0;
  };
  std::vector<std::array<TaskAgg, kTaskCount>> agg(iterations);
  std::vector<TimeNs> first(iterations, kMax), last(iterations, 0);
  for (const CardPlan& card : plan.card) {
    for (const PhaseSpan& ph : card.phases) {
      TaskAgg& a = agg[ph.iteration][static_cast<int>(ph.task)];
      a.first = std::min(a.first, ph.start);
      a.last = std::max(a.last, ph.end);
      a.card_ns += ph.end - ph.start;
      first[ph.iteration] = std::min(first[ph.iteration], ph.start);
      last[ph.iteration] = std::max(last[ph.iteration], ph.end);
    }
  }
  std::vector<LabeledValue> out;
  auto add = [&](int it, const std::string& key, double v) { out.push_back({-1, it, key, v}); };
  for (int it = 0; it < iterations; ++it) {
    // Window: from the previous window's end (the first: its first phase)
    // to the end of this iteration's last phase.
    const TimeNs start = it == 0 ? first[0] : last[it - 1];
    const TimeNs end = last[it];
    // Card-time inside any phase range (of any iteration: with StaleSync
    // the next rollout runs inside this window), clipped to the window.
    TimeNs busy = 0;
    for (const CardPlan& card : plan.card)
      for (const PhaseSpan& ph : card.phases)
        busy += std::max<TimeNs>(0, std::min(ph.end, end) - std::max(ph.start, start));
    // Long tail: every rollout card waits from its own range's end to the
    // iteration's last rollout end.
    const TaskAgg& gen = agg[it][static_cast<int>(Task::kGenerateSequences)];
    TimeNs idle = 0;
    for (const CardPlan& card : plan.card)
      for (const PhaseSpan& ph : card.phases)
        if (ph.iteration == it && ph.task == Task::kGenerateSequences) idle += gen.last - ph.end;
    TimeNs switch_ns = 0;
    add(it, "start_ns", double(start));
    add(it, "time_ns", double(end - start));
    for (int t = 0; t < kTaskCount; ++t) {
      const TaskAgg& a = agg[it][t];
      if (a.first == kMax) continue;
      const Task task = static_cast<Task>(t);
      const std::string name(TaskName(task));
      add(it, "phases." + name + ".time_ns", double(a.last - a.first));
      add(it, "phases." + name + ".card_ns", double(a.card_ns));
      if (task == Task::kReshardToTrain || task == Task::kReshardToInfer ||
          task == Task::kSyncWeights)
        switch_ns += a.last - a.first;
    }
    add(it, "busy_card_ns", double(busy));
    add(it, "long_tail_idle_card_ns", double(idle));
    add(it, "switch_ns", double(switch_ns));
    add(it, "generated_tokens", double(plan.generated_tokens[it]));
    add(it, "trained_tokens", double(plan.trained_tokens[it]));
    add(it, "staleness", double(plan.staleness[it]));
  }
  return out;
}

}  // namespace moetrace::tracegen::rl
