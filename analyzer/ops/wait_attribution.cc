#include "analyzer/ops/wait_attribution.h"

#include <algorithm>

namespace moetrace::ops {
namespace {

// Adds |[s, e) ∩ counted windows| to *acc; `w` is a cursor over windows
// (pieces arrive in increasing order).
void Clip(TimeNs s, TimeNs e, const TimeNs* bounds, const int32_t* step_ids, size_t W,
          size_t* w, int64_t* acc) {
  while (*w < W && bounds[*w + 1] <= s) ++*w;
  for (size_t k = *w; k < W && bounds[k] < e; ++k) {
    const TimeNs lo = std::max(s, bounds[k]), hi = std::min(e, bounds[k + 1]);
    if (hi > lo && step_ids[k] >= 0) *acc += hi - lo;
  }
}

}  // namespace

void AttributeHostBound(const RankScratch::Item* waits, size_t n,
                        const std::pair<TimeNs, TimeNs>* busy, size_t n_busy,
                        const TimeNs* bounds, const int32_t* step_ids, size_t W,
                        std::vector<int64_t>* by_name, std::vector<WaitShare>* out) {
  out->clear();
  if (n == 0 || W == 0) return;
  std::vector<int64_t>& acc = *by_name;
  std::vector<StringId> touched;
  TimeNs cover = waits[0].start;  // end of the waits taken so far
  size_t j = 0, w = 0;
  for (size_t i = 0; i < n; ++i) {
    // The part of this wait no earlier wait covers: the pieces are disjoint
    // and increasing, so one pass over busy time and windows serves all.
    const TimeNs s = std::max(waits[i].start, cover), e = waits[i].end;
    if (e <= s) continue;
    cover = e;
    const StringId name = waits[i].name;
    if (name >= acc.size()) acc.resize(name + 1, 0);
    const int64_t before = acc[name];
    while (j < n_busy && busy[j].second <= s) ++j;
    TimeNs cur = s;
    for (size_t k = j; k < n_busy && busy[k].first < e; ++k) {
      if (busy[k].first > cur) Clip(cur, busy[k].first, bounds, step_ids, W, &w, &acc[name]);
      cur = std::max(cur, busy[k].second);
      if (cur >= e) break;
    }
    if (cur < e) Clip(cur, e, bounds, step_ids, W, &w, &acc[name]);
    if (before == 0 && acc[name] != 0) touched.push_back(name);
  }
  std::sort(touched.begin(), touched.end());
  for (StringId name : touched) {
    out->push_back({name, acc[name]});
    acc[name] = 0;
  }
}

}  // namespace moetrace::ops
