// Hand-built RL traces for analyzer/rl's tests (the worked answers are in
// the tests). Header only: tests include it, the library does not.
#pragma once

#include <string>

#include "formats/trace.h"

namespace moetrace::rl::traces {

// Appends a range named `name` on `rank`'s host thread 0 (created first).
inline void Range(Rank* rank, const std::string& name, TimeNs start, TimeNs end,
                  int32_t step = kNone, Category cat = Category::kMarker) {
  if (rank->tracks.empty()) rank->AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "main");
  Event e;
  e.ts = start;
  e.dur = end - start;
  e.category = cat;
  e.step = step;
  e.name = rank->strings.Intern(name);
  rank->tracks[0].events.Append(e);
}

// A `generated_tokens` counter with samples (time, cumulative tokens).
inline void Tokens(Rank* rank, std::initializer_list<std::pair<TimeNs, double>> samples) {
  Track& t = rank->AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "generated_tokens");
  for (const auto& [ts, v] : samples) {
    t.sample_ts.push_back(ts);
    t.sample_value.push_back(v);
  }
}

// Colocated, synchronous, 4 cards, 2 iterations (steps set). Cards 0 and 1
// roll out (card 1 ends 20 ns early in iteration 0, card 0 10 ns early in
// iteration 1); every card reshards, 0-1 compute log-probs while 2-3 run the
// reference; all four update. Iteration 1 is iteration 0 shifted by 200 ns.
inline Trace Colocated() {
  Trace t;
  t.metadata.source = "tracegen";
  t.metadata.attributes = {{"rl.trained_tokens.0", "5000"}, {"rl.trained_tokens.1", "5000"}};
  t.ranks.resize(4);
  for (int r = 0; r < 4; ++r) {
    Rank& k = t.ranks[r];
    k.rank = r;
    for (int i = 0; i < 2; ++i) {
      const TimeNs b = 200 * i;
      if (r < 2) {
        const TimeNs end = r == 0 ? (i == 0 ? 100 : 90) : (i == 0 ? 80 : 100);
        Range(&k, "rollout/generate_sequences", b, b + end, i);
        Range(&k, "actor/compute_log_prob", b + 110, b + 125, i);
      } else {
        Range(&k, "ref/compute_ref_log_prob", b + 110, b + 130, i);
      }
      Range(&k, "actor/reshard_to_train", b + 100, b + 110, i);
      Range(&k, "actor/update_actor", b + 130, b + 180, i);
      Range(&k, "actor/reshard_to_infer", b + 180, b + 190, i);
    }
  }
  // Not phases: an annotation nested in card 0's rollout, a step marker, an
  // unknown marker (counted), an instant.
  Range(&t.ranks[0], "generate_sequences", 10, 20, kNone, Category::kHostOp);
  Range(&t.ranks[0], "checkpoint/save", 192, 195);
  Event step;
  step.ts = 0;
  step.dur = 190;
  step.category = Category::kMarker;
  step.flags = kFlagStepMarker;
  step.name = t.ranks[0].strings.Intern("ProfilerStep#0");
  t.ranks[0].tracks[0].events.Append(step);
  Tokens(&t.ranks[0], {{0, 0}, {50, 300}, {100, 600}, {250, 900}, {290, 1000}});
  Tokens(&t.ranks[1], {{0, 0}, {80, 400}, {300, 1000}});
  for (Rank& k : t.ranks) k.tracks[0].events.SortByTime();
  return t;
}

// Separate pools with StaleSync: cards 0-1 roll out, 2-3 train; the
// rollout of iteration i+1 starts as soon as iteration i's rollout ends,
// while iteration i trains.
inline Trace Separate() {
  Trace t;
  t.metadata.source = "tracegen";
  t.ranks.resize(4);
  // (iteration, rollout start) and the training pool's (log-prob start).
  const TimeNs gen[3] = {0, 100, 230};
  const TimeNs train[3] = {100, 230, 350};
  for (int r = 0; r < 4; ++r) {
    Rank& k = t.ranks[r];
    k.rank = r;
    for (int i = 0; i < 3; ++i) {
      if (r < 2) {
        Range(&k, "rollout/generate_sequences", gen[i], gen[i] + 100, i);
      } else {
        Range(&k, "actor/compute_log_prob", train[i], train[i] + 20, i);
        Range(&k, "actor/update_actor", train[i] + 20, train[i] + 120, i);
      }
      Range(&k, "actor/sync_weights", train[i] + 120, train[i] + 130, i);
    }
    k.tracks[0].events.SortByTime();
  }
  return t;
}

}  // namespace moetrace::rl::traces
