#include "tracegen/split_schedule.h"

#include <algorithm>
#include <cmath>

namespace moetrace::tracegen {

double PipelineMakespan(const SplitCosts& costs, const std::vector<int>& counts,
                        const std::vector<std::vector<PipeItem>>& schedules, int pp) {
  const int slices = int(counts.size());
  if (slices == 0 || int(schedules.size()) != pp) return -1;
  std::vector<double> fwd(size_t(slices), 0.0), bwd(size_t(slices), 0.0);
  int at = 0;
  for (int s = 0; s < slices; ++s) {
    for (int l = at; l < at + counts[size_t(s)]; ++l) {
      fwd[size_t(s)] += costs.fwd[size_t(l)];
      bwd[size_t(s)] += costs.bwd[size_t(l)];
    }
    at += counts[size_t(s)];
  }
  if (at != int(costs.fwd.size())) return -1;
  fwd[0] += costs.first_fwd;
  bwd[0] += costs.first_bwd;
  fwd[size_t(slices - 1)] += costs.last_fwd;
  bwd[size_t(slices - 1)] += costs.last_bwd;
  const int mtp = costs.mtp_stage >= 0 && costs.mtp_stage < slices ? costs.mtp_stage : slices - 1;
  fwd[size_t(mtp)] += costs.mtp_fwd;
  bwd[size_t(mtp)] += costs.mtp_bwd;
  int mbs = 0;
  for (const auto& sched : schedules)
    for (const PipeItem& it : sched) mbs = std::max({mbs, it.a.mb + 1, it.fused ? it.b.mb + 1 : 0});
  // End times per (slice, micro-batch, direction); < 0: not run yet.
  std::vector<double> end(size_t(slices) * size_t(mbs) * 2, -1.0);
  auto done = [&](int ms, int mb, bool back) -> double& {
    return end[(size_t(ms) * size_t(mbs) + size_t(mb)) * 2 + (back ? 1 : 0)];
  };
  // The time a task's inputs are there, or < 0 if not yet.
  auto ready = [&](const PipeTask& t) -> double {
    if (!t.backward) return t.model_stage == 0 ? 0.0 : done(t.model_stage - 1, t.mb, false);
    return t.model_stage == slices - 1 ? done(t.model_stage, t.mb, false) : done(t.model_stage + 1, t.mb, true);
  };
  auto dur = [&](const PipeTask& t) { return t.backward ? bwd[size_t(t.model_stage)] : fwd[size_t(t.model_stage)]; };
  std::vector<size_t> next(size_t(pp), 0);
  std::vector<double> free_at(size_t(pp), 0.0);
  size_t left = 0;
  for (const auto& sched : schedules) left += sched.size();
  double makespan = 0;
  // Sweep the stages, each running items while their inputs are there;
  // every sweep runs at least one item or the schedule is stuck.
  while (left > 0) {
    bool ran = false;
    for (int s = 0; s < pp; ++s) {
      const auto& sched = schedules[size_t(s)];
      while (next[size_t(s)] < sched.size()) {
        const PipeItem& it = sched[next[size_t(s)]];
        double start = ready(it.a);
        if (start < 0) break;
        double d = dur(it.a);
        if (it.fused) {
          const double rb = ready(it.b);
          if (rb < 0) break;
          start = std::max(start, rb);
          d += dur(it.b);
        }
        start = std::max(start, free_at[size_t(s)]);
        const double e = start + d;
        done(it.a.model_stage, it.a.mb, it.a.backward) = e;
        if (it.fused) done(it.b.model_stage, it.b.mb, it.b.backward) = e;
        free_at[size_t(s)] = e;
        makespan = std::max(makespan, e);
        ++next[size_t(s)];
        --left;
        ran = true;
      }
    }
    if (!ran) return -1;
  }
  return makespan;
}

std::vector<int> PipelineSplit(const SplitCosts& costs, const std::vector<std::vector<int>>& starts,
                               const std::vector<std::vector<PipeItem>>& schedules, int pp,
                               const std::vector<int>& mtp_stages, int* mtp_stage_out) {
  std::vector<int> best;
  double best_span = 0;
  int best_mtp = costs.mtp_stage;
  const int layers = int(costs.fwd.size());
  const bool last_work = costs.last_fwd + costs.last_bwd > 0;
  const bool mtp_work = costs.mtp_fwd + costs.mtp_bwd > 0;
  const std::vector<int> candidates = mtp_stages.empty() ? std::vector<int>{costs.mtp_stage} : mtp_stages;
  for (int mtp_stage : candidates) {
    SplitCosts c = costs;
    c.mtp_stage = mtp_stage;
    for (const std::vector<int>& given : starts) {
      const int slices = int(given.size());
      int sum = 0;
      for (int v : given) sum += v;
      if (slices == 0 || sum != layers) continue;
      if (!best.empty() && best.size() != given.size()) continue;
      // The MTP's slice (the last when -1); the slices after it run the
      // losses only, so they hold no decoder layer.
      const int m = mtp_stage >= 0 && mtp_stage < slices ? mtp_stage : slices - 1;
      std::vector<int> counts = given;
      for (int i = m + 1; i < slices; ++i) {
        counts[size_t(m)] += counts[size_t(i)];
        counts[size_t(i)] = 0;
      }
      double span = PipelineMakespan(c, counts, schedules, pp);
      if (span < 0) continue;
      auto floor_of = [&](int i) { return (i == slices - 1 && last_work) || (i == m && mtp_work) ? 0 : 1; };
      // First improvement: a round ends at the first move that lowers the
      // makespan by more than rounding; layers*slices rounds bound the search.
      for (int round = 0; round < layers * slices; ++round) {
        bool moved = false;
        for (int i = 0; i <= m && !moved; ++i) {
          if (counts[size_t(i)] <= floor_of(i)) continue;
          for (int j = 0; j <= m && !moved; ++j) {
            if (j == i) continue;
            --counts[size_t(i)];
            ++counts[size_t(j)];
            const double sp = PipelineMakespan(c, counts, schedules, pp);
            if (sp >= 0 && sp < span * (1 - 1e-9)) {
              span = sp;
              moved = true;
            } else {
              ++counts[size_t(i)];
              --counts[size_t(j)];
            }
          }
        }
        if (!moved) break;
      }
      if (best.empty() || span < best_span * (1 - 1e-9)) {
        best = counts;
        best_span = span;
        best_mtp = mtp_stage;
      }
    }
  }
  if (mtp_stage_out) *mtp_stage_out = best_mtp;
  return best;
}

}  // namespace moetrace::tracegen
