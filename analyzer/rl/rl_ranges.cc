#include "analyzer/rl/rl_ranges.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The first index in [i, n) whose category is a marker or a host op, or n.
// A training card's host threads are nearly all launches (the 718B trace:
// 21,700 a rank, one marker): 16 categories per compare (SSE2, the x86-64
// baseline) instead of a test and branch per event, which was ~1% of
// `analyze`'s samples.
size_t NextRangeCandidate(const Category* cat, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i marker = _mm_set1_epi8(static_cast<char>(Category::kMarker));
  const __m128i host_op = _mm_set1_epi8(static_cast<char>(Category::kHostOp));
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cat + i));
    const unsigned hit = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, marker), _mm_cmpeq_epi8(v, host_op))));
    if (hit != 0) return i + static_cast<size_t>(std::countr_zero(hit));
  }
#endif
  while (i < n && cat[i] != Category::kMarker && cat[i] != Category::kHostOp) ++i;
  return i;
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
    const Category* cat = ev.category.data();
    const size_t n = ev.size();
    for (size_t i = NextRangeCandidate(cat, 0, n); i < n; i = NextRangeCandidate(cat, i + 1, n)) {
      const Category c = cat[i];
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
  // A bare reshard / offload / onload is an RL switch only next to RL work
  // on the card; alone it is some other framework's (FSDP2's reshard).
  if (std::none_of(found.begin(), found.end(), [](const Candidate& f) { return !f.what.bare; })) {
    found.clear();
  }
  if (found.empty()) return out;
  // By start, the outer of two ranges that start together first: a range
  // ending before the latest end so far lies inside an earlier one. A
  // zero-length range goes before the others starting with it: at a
  // range's start it is not inside that range.
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.start != b.start) return a.start < b.start;
    const bool a_empty = a.end == a.start, b_empty = b.end == b.start;
    if (a_empty != b_empty) return a_empty;
    return a.end > b.end;
  });
  int64_t max_end = found.front().start;
  std::optional<Task> last_work;  // the last non-switch task, for an undirected switch
  for (const Candidate& f : found) {
    // Inside an earlier range: it starts before that one's end and ends by
    // it. A zero-length range at the end (an instance given no sequence)
    // is a phase of its own.
    if (f.start < max_end && f.end <= max_end && !out.ranges.empty()) continue;
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
    // Without a step the iteration is decided job-wide (AssignIterations:
    // with separate pools a training card never rolls out).
    r.iteration = f.step >= 0 ? f.step : kNoIteration;
    r.start = f.start;
    r.end = f.end;
    if (r.task == Task::kGenerateSequences && tokens) {
      r.tokens = static_cast<int64_t>(ValueAt(*tokens, r.end) - ValueAt(*tokens, r.start));
    }
    out.ranges.push_back(r);
  }
  return out;
}

void AssignIterations(std::vector<CardPhases>* cards) {
  // Rollout waves: a card's k-th generate_sequences of unknown iteration is
  // in wave k; a wave starts at its earliest such range over the cards.
  std::vector<int64_t> wave_start;
  for (CardPhases& c : *cards) {
    size_t k = 0;
    for (PhaseRange& r : c.ranges) {
      if (r.iteration != kNoIteration || r.task != Task::kGenerateSequences) continue;
      r.iteration = static_cast<int32_t>(k);
      if (k == wave_start.size()) {
        wave_start.push_back(r.start);
      } else {
        wave_start[k] = std::min(wave_start[k], r.start);
      }
      ++k;
    }
  }
  // Waves start in order (each card's rollouts follow each other); a
  // running max keeps the search valid if one card started late.
  for (size_t k = 1; k < wave_start.size(); ++k) {
    wave_start[k] = std::max(wave_start[k], wave_start[k - 1]);
  }
  for (CardPhases& c : *cards) {
    for (PhaseRange& r : c.ranges) {
      if (r.iteration != kNoIteration) continue;
      const auto waves = std::upper_bound(wave_start.begin(), wave_start.end(), r.start) -
                         wave_start.begin();
      r.iteration = static_cast<int32_t>(std::max<int64_t>(waves - 1, 0));
    }
  }
}

}  // namespace moetrace::rl
