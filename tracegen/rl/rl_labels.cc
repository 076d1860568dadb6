#include "tracegen/rl/rl_labels.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

namespace moetrace::tracegen::rl {
namespace {

// `v` as disjoint intervals, sorted.
std::vector<std::pair<TimeNs, TimeNs>> Union(std::vector<std::pair<TimeNs, TimeNs>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<TimeNs, TimeNs>> out;
  for (const auto& [s, e] : v) {
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

}  // namespace

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
  // Each card's phase ranges merged (a card's ranges do not overlap in a
  // plan, but busy time is defined on their union, as the analyzer has it).
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> merged(plan.card.size());
  for (size_t c = 0; c < plan.card.size(); ++c) {
    std::vector<std::pair<TimeNs, TimeNs>> v;
    for (const PhaseSpan& ph : plan.card[c].phases) v.emplace_back(ph.start, ph.end);
    merged[c] = Union(std::move(v));
  }
  std::vector<LabeledValue> out;
  auto add = [&](int it, const std::string& key, double v) { out.push_back({-1, it, key, v}); };
  TimeNs prev_end = 0;
  for (int it = 0; it < iterations; ++it) {
    // Window: from the previous window's end (the first: its first phase)
    // to the end of this iteration's last phase.
    const TimeNs start = it == 0 ? first[0] : prev_end;
    const TimeNs end = std::max(start, last[it]);
    prev_end = end;
    // Card-time inside any phase range (of any iteration: with StaleSync
    // the next rollout runs inside this window), clipped to the window.
    TimeNs busy = 0;
    for (const auto& ranges : merged)
      for (const auto& [s, e] : ranges) busy += std::max<TimeNs>(0, std::min(e, end) - std::max(s, start));
    // Long tail: every rollout card waits from its own range's end to the
    // iteration's last rollout end.
    const TaskAgg& gen = agg[it][static_cast<int>(Task::kGenerateSequences)];
    TimeNs idle = 0;
    for (const CardPlan& card : plan.card) {
      TimeNs own = -1;
      for (const PhaseSpan& ph : card.phases)
        if (ph.iteration == it && ph.task == Task::kGenerateSequences) own = std::max(own, ph.end);
      if (own >= 0) idle += gen.last - own;
    }
    // Switch: the time any card is switching (union over cards), not the
    // sum of the three phases' spans: a sync_weights that overlaps a
    // reshard would be counted twice.
    std::vector<std::pair<TimeNs, TimeNs>> switches;
    for (const CardPlan& card : plan.card)
      for (const PhaseSpan& ph : card.phases)
        if (ph.iteration == it && (ph.task == Task::kReshardToTrain || ph.task == Task::kReshardToInfer ||
                                   ph.task == Task::kSyncWeights))
          switches.emplace_back(ph.start, ph.end);
    TimeNs switch_ns = 0;
    for (const auto& [s, e] : Union(std::move(switches))) switch_ns += e - s;
    // Staleness in force: earlier iterations whose update_actor (last
    // card's end) had not ended when this iteration's rollout began (first
    // card's start), or plan.staleness, the weight-version lag of the
    // responses trained, if larger: a colocated partial rollout has that lag
    // without any overlap in time (tracegen/rl/README.md, Labels).
    int staleness = 0;
    if (gen.first != kMax)
      for (int j = 0; j < it; ++j) {
        const TaskAgg& up = agg[j][static_cast<int>(Task::kUpdateActor)];
        if (up.first != kMax && up.last > gen.first) ++staleness;
      }
    // The analyzer raises it to the lag tracegen writes as rl.staleness.<i>
    // (rl_generate.cc): the labels follow the same rule.
    if (size_t(it) < plan.staleness.size()) staleness = std::max(staleness, int(plan.staleness[size_t(it)]));
    add(it, "start_ns", double(start));
    add(it, "time_ns", double(end - start));
    for (int t = 0; t < kTaskCount; ++t) {
      const TaskAgg& a = agg[it][t];
      if (a.first == kMax) continue;
      const std::string name(TaskName(static_cast<Task>(t)));
      add(it, "phases." + name + ".time_ns", double(a.last - a.first));
      add(it, "phases." + name + ".card_ns", double(a.card_ns));
    }
    add(it, "busy_card_ns", double(busy));
    add(it, "long_tail_idle_card_ns", double(idle));
    add(it, "switch_ns", double(switch_ns));
    add(it, "generated_tokens", double(plan.generated_tokens[it]));
    add(it, "trained_tokens", double(plan.trained_tokens[it]));
    add(it, "staleness", double(staleness));
  }
  return out;
}

}  // namespace moetrace::tracegen::rl
