// A hand-built rl::Plan for the emitter's tests (header only: not part of
// the library). 4 cards, 2 iterations, every time chosen by hand:
//   instance 0 = cards {0, 1}: prefill + 3 decode steps;
//   instance 1 = cards {2, 3}: prefill + 5 decode steps (the long tail);
//   cards 0-2 colocated (train ranks 0-2 of tiny-moe, 2 optimizer steps):
//     generate_sequences, compute_log_prob, compute_ref_log_prob,
//     reshard_to_train, update_actor, reshard_to_infer;
//   card 3 rollout only: generate_sequences, compute_log_prob,
//     compute_ref_log_prob, sync_weights.
#pragma once

#include <algorithm>
#include <memory>

#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl::testing {

inline constexpr TimeNs kMs = 1'000'000;
inline constexpr int kCards = 4, kIterations = 2, kUpdateSteps = 2;
inline constexpr uint64_t kScoreFlops = 1'000'000'000'003, kScoreBytes = 2'000'000'001;
inline constexpr uint64_t kReshardBytes = 100'000'000, kOptimizerBytes = 200'000'000;

// Decode steps of instance i: 3 or 5, each 1 ms with 0.2 ms of all-to-all;
// prefill 2 ms; batch 4 sequences, 4 tokens a decode step.
inline int DecodeSteps(int instance) { return instance == 0 ? 3 : 5; }

inline Plan HandPlan() {
  Plan p;
  p.config = BuildConfig({"tiny-moe", "", {}, kUpdateSteps});
  p.train_config = p.config;
  p.train_engine = std::make_shared<Engine>(p.train_config);
  p.train_engine->Simulate(1);
  TimeNs train_len = 0;
  for (int64_t e : p.train_engine->RankEndTimes()) train_len = std::max(train_len, e);
  train_len += kMs;  // the update's range closes after the host's last read
  const TimeNs iter_len = 20 * kMs + train_len + 3 * kMs;
  p.cards = kCards;
  p.card.resize(kCards);
  p.instances.resize(2);
  p.instances[0].cards = {0, 1};
  p.instances[1].cards = {2, 3};
  for (int c = 0; c < kCards; ++c) {
    p.card[size_t(c)].instance = c / 2;
    p.card[size_t(c)].train_rank = c < 3 ? c : -1;
  }
  for (int it = 0; it < kIterations; ++it) {
    const TimeNs t0 = it * iter_len;
    for (int i = 0; i < 2; ++i) {
      InstanceIteration ii;
      ii.iteration = it;
      ii.start = t0;
      int64_t kv = 0;
      RolloutStep pre;
      pre.start = t0;
      pre.dur = 2 * kMs;
      pre.prefill = true;
      pre.batch = 4;
      pre.new_tokens = 4 * 128;
      pre.kv_bytes = kv = 1'000'000;
      pre.flops = 5'000'000'000;
      pre.bytes = 300'000'000;
      ii.steps.push_back(pre);
      for (int d = 0; d < DecodeSteps(i); ++d) {
        RolloutStep st;
        st.start = t0 + 2 * kMs + d * kMs;
        st.dur = kMs;
        st.batch = 4;
        st.new_tokens = 4;
        st.kv_bytes = kv += 10'000;
        st.flops = 7'000'000 + uint64_t(d);
        st.bytes = 400'000'000;
        st.comm_dur = kMs / 5;
        st.comm_bytes = 65'536 + uint64_t(d);
        ii.steps.push_back(st);
        ii.generated_tokens += st.new_tokens;
      }
      ii.end = t0 + 2 * kMs + DecodeSteps(i) * kMs;
      p.instances[size_t(i)].iterations.push_back(ii);
    }
    for (int c = 0; c < kCards; ++c) {
      auto& ph = p.card[size_t(c)].phases;
      const InstanceIteration& ii = p.instances[size_t(c / 2)].iterations.back();
      auto add = [&](Task t, TimeNs s, TimeNs e) -> PhaseSpan& {
        PhaseSpan sp;
        sp.iteration = it;
        sp.task = t;
        sp.start = s;
        sp.end = e;
        ph.push_back(sp);
        return ph.back();
      };
      add(Task::kGenerateSequences, ii.start, ii.end);
      for (Task t : {Task::kComputeLogProb, Task::kComputeRefLogProb}) {
        const TimeNs s = t0 + (t == Task::kComputeLogProb ? 10 : 14) * kMs;
        PhaseSpan& sp = add(t, s, s + 4 * kMs);
        sp.flops = kScoreFlops;
        sp.bytes = kScoreBytes;
        sp.comm_dur = kMs / 2;
        sp.comm_bytes = 1'000'000;
      }
      const TimeNs train_start = t0 + 20 * kMs, train_end = train_start + train_len;
      if (c < 3) {
        PhaseSpan& to_train = add(Task::kReshardToTrain, t0 + 18 * kMs, train_start);
        to_train.comm_dur = kMs;
        to_train.comm_bytes = kReshardBytes;
        to_train.copy_dur = 3 * kMs / 2;
        to_train.copy_bytes = kOptimizerBytes;
        add(Task::kUpdateActor, train_start, train_end);
        PhaseSpan& to_infer = add(Task::kReshardToInfer, train_end, train_end + 2 * kMs);
        to_infer.comm_dur = kMs;
        to_infer.comm_bytes = kReshardBytes;
        to_infer.copy_dur = 3 * kMs / 2;
        to_infer.copy_bytes = kOptimizerBytes;
      } else {
        PhaseSpan& sync = add(Task::kSyncWeights, train_end, train_end + 2 * kMs);
        sync.comm_dur = kMs;
        sync.comm_bytes = kReshardBytes;
      }
    }
  }
  p.generated_tokens = {4 * 3 + 4 * 5, 4 * 3 + 4 * 5};  // per iteration, each instance once
  p.trained_tokens = {48, 40};  // by hand: only the metadata carries them
  p.labels.push_back({-1, 0, "start_ns", 0});
  p.labels.push_back({-1, 0, "time_ns", double(iter_len)});
  return p;
}

}  // namespace moetrace::tracegen::rl::testing
