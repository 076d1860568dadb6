#include "analyzer/rl/rl_section.h"

#include "analyzer/rl/rl_ranges.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <string>
#include <utility>

namespace moetrace::rl {
namespace {

using Interval = std::pair<int64_t, int64_t>;

// Length of the union of `v` (sorted here).
int64_t UnionLength(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : v) {
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = s;
    cur_e = e;
    open = true;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

struct TaskAgg {
  bool seen = false;
  Role role = Role::kRollout;
  int64_t start = 0, end = 0, card_ns = 0;
  int32_t cards = 0;
  int32_t last_card = -1;  // cards are visited in order: counts each once
};

struct IterAgg {
  int64_t first = 0, last = 0;  // earliest start, latest end of its phases
  std::array<TaskAgg, kTaskCount> tasks;
  std::vector<int64_t> rollout_end;  // per card that ran generate_sequences: its last end
  std::vector<Interval> switches;
  int64_t tokens = 0;
  bool has_tokens = false;
};

bool Attribute(const Metadata& m, const std::string& key, int64_t* out) {
  for (const auto& [k, v] : m.attributes) {
    if (k != key) continue;
    return std::from_chars(v.data(), v.data() + v.size(), *out).ec == std::errc();
  }
  return false;
}

}  // namespace

void FillRl(std::vector<CardPhases> cards, const Metadata& metadata, analysis::Analysis* analysis) {
  std::erase_if(cards, [](const CardPhases& c) { return c.ranges.empty(); });
  // An RL job runs some task besides switches; a trace of reshards (or
  // weight syncs) alone is not RL.
  const bool rl_work = std::any_of(cards.begin(), cards.end(), [](const CardPhases& c) {
    return std::any_of(c.ranges.begin(), c.ranges.end(),
                       [](const PhaseRange& r) { return !IsSwitch(r.task); });
  });
  if (!rl_work) return;
  std::sort(cards.begin(), cards.end(),
            [](const CardPhases& a, const CardPhases& b) { return a.rank < b.rank; });
  AssignIterations(&cards);
  const int64_t n_cards = static_cast<int64_t>(cards.size());

  std::map<int32_t, IterAgg> iters;
  bool colocated = false;
  int64_t ignored = 0;
  for (int32_t c = 0; c < static_cast<int32_t>(cards.size()); ++c) {
    ignored += cards[c].ignored_markers;
    bool rollout = false, update = false;
    std::map<int32_t, int64_t> own_rollout_end;
    for (const PhaseRange& r : cards[c].ranges) {
      auto [it, fresh] = iters.try_emplace(r.iteration);
      IterAgg& a = it->second;
      if (fresh) {
        a.first = r.start;
        a.last = r.end;
      }
      a.first = std::min(a.first, r.start);
      a.last = std::max(a.last, r.end);
      TaskAgg& t = a.tasks[static_cast<size_t>(r.task)];
      if (!t.seen) {
        t = {true, r.role, r.start, r.end, 0, 0, -1};
      }
      t.start = std::min(t.start, r.start);
      t.end = std::max(t.end, r.end);
      t.card_ns += r.end - r.start;
      if (t.last_card != c) {
        t.last_card = c;
        ++t.cards;
      }
      if (IsSwitch(r.task)) a.switches.emplace_back(r.start, r.end);
      if (r.task == Task::kGenerateSequences) {
        rollout = true;
        int64_t& e = own_rollout_end.try_emplace(r.iteration, r.end).first->second;
        e = std::max(e, r.end);
        if (r.tokens >= 0) {
          a.tokens += r.tokens;
          a.has_tokens = true;
        }
      }
      if (r.task == Task::kUpdateActor) update = true;
    }
    for (const auto& [i, e] : own_rollout_end) iters[i].rollout_end.push_back(e);
    colocated = colocated || (rollout && update);
  }

  // Windows: each iteration's from the previous one's end to its last phase's end.
  std::vector<int32_t> order;
  std::vector<Interval> windows;
  for (const auto& [i, a] : iters) {
    const int64_t start = windows.empty() ? a.first : windows.back().second;
    windows.emplace_back(start, std::max(start, a.last));
    order.push_back(i);
  }

  // Busy card-time per window: each card's union of phase ranges (any
  // iteration: with staleness the next rollout runs in this window) clipped to it.
  std::vector<int64_t> busy(windows.size(), 0);
  for (const CardPhases& card : cards) {
    std::vector<Interval> merged;
    for (const PhaseRange& r : card.ranges) {  // by start
      if (!merged.empty() && r.start <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, r.end);
      } else {
        merged.emplace_back(r.start, r.end);
      }
    }
    // Windows follow each other (each starts where the last ended) and the
    // merged ranges are disjoint and sorted: one sweep, each interval
    // visiting only the windows it overlaps.
    size_t w0 = 0;
    for (const auto& [s, e] : merged) {
      while (w0 < windows.size() && windows[w0].second <= s) ++w0;
      for (size_t w = w0; w < windows.size() && windows[w].first < e; ++w) {
        const int64_t lo = std::max(s, windows[w].first), hi = std::min(e, windows[w].second);
        if (hi > lo) busy[w] += hi - lo;
      }
    }
  }

  int64_t instance_cards = 1;
  if (!Attribute(metadata, "rl.instance_cards", &instance_cards) || instance_cards < 1) {
    instance_cards = 1;
  }

  analysis::Rl* out = analysis->mutable_rl();
  out->set_present(true);
  out->set_placement(colocated ? "colocated" : "separate");
  out->set_cards(static_cast<int32_t>(n_cards));
  out->set_ignored_markers(ignored);
  int64_t total_ns = 0, total_busy = 0, total_idle = 0, total_switch = 0;
  int64_t gen_tokens = 0, gen_ns = 0, trained_tokens = 0, trained_ns = 0;
  bool has_gen = false, has_trained = false;
  int32_t max_staleness = 0;
  std::vector<int64_t> later_windows;  // iterations after the first
  // Staleness: the ends of the updates of the iterations before each one,
  // kept sorted as the iterations go by (in order), counted by binary search.
  std::vector<int64_t> update_ends;
  for (size_t w = 0; w < windows.size(); ++w) {
    const int32_t i = order[w];
    IterAgg& a = iters[i];
    const int64_t time = windows[w].second - windows[w].first;
    analysis::RlIteration* it = out->add_iterations();
    it->set_iteration(i);
    it->set_start_ns(windows[w].first);
    it->set_time_ns(time);
    std::vector<size_t> tasks;
    for (size_t t = 0; t < a.tasks.size(); ++t) {
      if (a.tasks[t].seen) tasks.push_back(t);
    }
    std::stable_sort(tasks.begin(), tasks.end(),
                     [&](size_t x, size_t y) { return a.tasks[x].start < a.tasks[y].start; });
    for (size_t t : tasks) {
      const TaskAgg& g = a.tasks[t];
      analysis::RlPhase* p = it->add_phases();
      p->set_task(std::string(TaskName(static_cast<Task>(t))));
      p->set_role(std::string(RoleName(g.role)));
      p->set_start_ns(g.start);
      p->set_time_ns(g.end - g.start);
      p->set_share(time > 0 ? static_cast<double>(g.end - g.start) / static_cast<double>(time) : 0);
      p->set_card_ns(g.card_ns);
      p->set_cards(g.cards);
    }
    it->set_busy_card_ns(busy[w]);
    it->set_utilization(time > 0 ? static_cast<double>(busy[w]) /
                                       (static_cast<double>(n_cards) * static_cast<double>(time))
                                 : 0);
    int64_t idle = 0;
    if (!a.rollout_end.empty()) {
      const int64_t last = *std::max_element(a.rollout_end.begin(), a.rollout_end.end());
      for (int64_t e : a.rollout_end) idle += last - e;
    }
    it->set_long_tail_idle_card_ns(idle);
    const int64_t sw = UnionLength(std::move(a.switches));
    it->set_switch_ns(sw);
    if (a.has_tokens) {
      it->set_generated_tokens(a.tokens / instance_cards);
      gen_tokens += a.tokens / instance_cards;
      gen_ns += time;
      has_gen = true;
    }
    int64_t trained = 0;
    if (Attribute(metadata, "rl.trained_tokens." + std::to_string(i), &trained)) {
      it->set_trained_tokens(trained);
      trained_tokens += trained;
      trained_ns += time;
      has_trained = true;
    }
    // Staleness: updates of earlier iterations still running when this
    // iteration's rollout began (its weights are that many versions behind).
    int32_t staleness = 0;
    const TaskAgg& gen = a.tasks[static_cast<size_t>(Task::kGenerateSequences)];
    if (gen.seen) {
      staleness = static_cast<int32_t>(
          update_ends.end() - std::upper_bound(update_ends.begin(), update_ends.end(), gen.start));
    }
    // A producer that knows the weight versions (tracegen: metadata
    // attribute rl.staleness.<i>) can report lag the ranges do not show:
    // partial rollout carries responses begun on older weights over into a
    // rollout that overlaps no update (StaleSync on colocated cards).
    int64_t known = 0;
    if (Attribute(metadata, "rl.staleness." + std::to_string(i), &known) && known > staleness)
      staleness = static_cast<int32_t>(known);
    const TaskAgg& up = a.tasks[static_cast<size_t>(Task::kUpdateActor)];
    if (up.seen) update_ends.insert(std::upper_bound(update_ends.begin(), update_ends.end(), up.end), up.end);
    it->set_staleness(staleness);
    max_staleness = std::max(max_staleness, staleness);
    total_ns += time;
    total_busy += busy[w];
    total_idle += idle;
    total_switch += sw;
    if (w > 0) later_windows.push_back(time);
  }
  out->set_staleness(max_staleness);
  if (later_windows.empty()) later_windows.push_back(total_ns);
  std::sort(later_windows.begin(), later_windows.end());
  out->set_iteration_time_ns(later_windows[(later_windows.size() - 1) / 2]);
  const double card_time = static_cast<double>(n_cards) * static_cast<double>(total_ns);
  out->set_utilization(total_ns > 0 ? static_cast<double>(total_busy) / card_time : 0);
  out->set_long_tail_idle_share(total_ns > 0 ? static_cast<double>(total_idle) / card_time : 0);
  out->set_switch_share(total_ns > 0 ? static_cast<double>(total_switch) / static_cast<double>(total_ns) : 0);
  if (has_gen && gen_ns > 0) {
    out->set_generated_tokens_per_s(static_cast<double>(gen_tokens) * 1e9 / static_cast<double>(gen_ns));
  }
  if (has_trained && trained_ns > 0) {
    out->set_trained_tokens_per_s(static_cast<double>(trained_tokens) * 1e9 / static_cast<double>(trained_ns));
  }
}

}  // namespace moetrace::rl
