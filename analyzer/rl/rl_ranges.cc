#include "analyzer/rl/rl_ranges.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace moetrace::rl {
namespace {

struct Candidate {
  int64_t start, end;
  int32_t step;
  Recognised what;
};

// The value a counter holds at `t`: its last sample at or before t (0 before the first).
double ValueAt(const Track& counter, int64_t t) {
  const auto& ts = counter.sample_ts;
  const auto it = std::upper_bound(ts.begin(), ts.end(), t);
  if (it == ts.begin()) return 0;
  return counter.sample_value[static_cast<size_t>(it - ts.begin()) - 1];
}

}  // namespace

CardPhases CollectPhases(const Rank& rank) {
  CardPhases out;
  out.rank = rank.rank;
  // Names are interned: each is recognised once per rank, however many
  // events carry it (a host thread holds millions of ops).
  std::vector<std::optional<Recognised>> recognised;
  std::vector<char> known;
  std::vector<Candidate> found;
  const Track* tokens = nullptr;
  for (const Track& track : rank.tracks) {
    if (track.kind == TrackKind::kCounter) {
      if (rank.strings.Contains(track.name) && rank.strings.Get(track.name) == "generated_tokens") {
        tokens = &track;
      }
      continue;
    }
    if (track.kind != TrackKind::kHostThread) continue;
    const EventTable& ev = track.events;
    for (size_t i = 0; i < ev.size(); ++i) {
      const Category c = ev.category[i];
      if (c != Category::kMarker && c != Category::kHostOp) continue;
      if (ev.flags[i] & (kFlagStepMarker | kFlagInstant)) continue;
      const StringId name = ev.name[i];
      if (name >= known.size()) {
        known.resize(name + 1, 0);
        recognised.resize(name + 1);
      }
      if (!known[name]) {
        known[name] = 1;
        if (rank.strings.Contains(name)) recognised[name] = Recognise(rank.strings.Get(name));
      }
      if (!recognised[name]) {
        if (c == Category::kMarker) ++out.ignored_markers;
        continue;
      }
      found.push_back({ev.ts[i], ev.End(i), ev.step[i], *recognised[name]});
    }
  }
  if (found.empty()) return out;
  // By start, the outer of two ranges that start together first: a range
  // ending before the latest end so far lies inside an earlier one.
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  int64_t max_end = found.front().start;
  int32_t rollouts = 0;  // generate_sequences ranges so far
  std::optional<Task> last_work;  // the last non-switch task, for an undirected switch
  for (const Candidate& f : found) {
    if (f.end <= max_end && !out.ranges.empty()) continue;
    max_end = std::max(max_end, f.end);
    PhaseRange r;
    r.task = f.what.task;
    r.role = f.what.role;
    if (f.what.direction_unknown) {
      const bool after_update =
          last_work && (*last_work == Task::kUpdateActor || *last_work == Task::kUpdateCritic);
      r.task = after_update ? Task::kReshardToInfer : Task::kReshardToTrain;
    }
    if (!IsSwitch(r.task)) last_work = r.task;
    if (r.task == Task::kGenerateSequences) ++rollouts;
    r.iteration = f.step >= 0 ? f.step : std::max(rollouts - 1, 0);
    r.start = f.start;
    r.end = f.end;
    if (r.task == Task::kGenerateSequences && tokens) {
      r.tokens = static_cast<int64_t>(ValueAt(*tokens, r.end) - ValueAt(*tokens, r.start));
    }
    out.ranges.push_back(r);
  }
  return out;
}

}  // namespace moetrace::rl
