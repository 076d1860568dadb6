// One rollout instance's generation, as a continuous-batching inference
// engine runs it (vLLM / MindIE style): up to max_batch sequences in flight,
// fewer when their KV cache would not fit; sequences admitted together are
// prefilled in one chunk, then every decode step produces one token for each
// sequence in flight; a finished sequence frees its slot and its cache, and
// the next waiting sequence is admitted before the following step.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "tracegen/rl/inference_cost.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen::rl {

// Steps (prefill chunks and decode steps) all the instances of a plan may
// hold, as ValidateRlSize estimates them (at least twice the steps a plan
// really holds: one prefill chunk per decode step is counted, and a wave
// more): a RolloutStep is 72 bytes, so the plan stays under ~3.6 GB. Four
// CloudMatrix 384 of the 718B RL preset for 8 iterations estimate 2.5e7.
inline constexpr int64_t kMaxRolloutSteps = 100'000'000;

struct RolloutSequence {
  int64_t prompt = 0;    // tokens
  int64_t response = 0;  // tokens to generate (>= 1)
};

// A sequence done in a rollout: its lengths and the rollout that admitted it.
struct DoneSequence {
  RolloutSequence seq;
  int32_t iteration = 0;      // whose prompt it is
  int32_t first_rollout = 0;  // the rollout (iteration) that started generating it
};

// An instance across iterations. A sequence is admitted only when one
// attention-DP group's KV capacity can hold it at prompt + `response_cap`
// (the engine cannot know the length in advance, so nothing is ever
// preempted); it goes to the group with the fewest tokens reserved.
class InstanceRollout {
 public:
  // `max_steps`: a backstop on the steps of all its rollouts together (an
  // InputError past it; ValidateRl's estimate keeps real configs below).
  InstanceRollout(const InferenceCost& cost, int max_batch, int64_t response_cap,
                  int64_t max_steps = kMaxRolloutSteps);
  // Queues iteration `iteration`'s sequences behind those already queued.
  void Enqueue(int iteration, const std::vector<RolloutSequence>& seqs);
  // Rollout `rollout` from `start`. quota < 0: until nothing is queued or in
  // flight. quota >= 0 (partial rollout): until `quota` sequences are done
  // in this rollout and none in flight was started by a rollout before
  // `oldest_kept`; the others stay in flight for the next call, which first
  // prefills them again (prompt + tokens generated so far: the weights have
  // changed). With a quota, at most min(max_batch, quota) sequences are in
  // flight: slots freed by finished sequences are refilled, spare ones stay
  // spare as they would without a next iteration queued. Appends the
  // sequences done to *done. Throws std::logic_error
  // if one sequence alone does not fit the KV cache (ValidateRl rejects it).
  InstanceIteration Run(int rollout, TimeNs start, int64_t quota, int oldest_kept,
                        std::vector<DoneSequence>* done);
  int64_t in_flight() const { return static_cast<int64_t>(active_.size()); }

 private:
  struct Active {
    RolloutSequence seq;
    int32_t iteration = 0, first_rollout = 0;
    int64_t done_after = 0;  // decode step count at which it is done
    int32_t group = 0;       // the attention-DP group holding its cache
  };
  // t + dur, counting the step against max_steps_ and kMaxPlanNs.
  TimeNs Advance(TimeNs t, TimeNs dur);
  struct Queued {
    RolloutSequence seq;
    int32_t iteration = 0;
  };
  const InferenceCost& cost_;
  int max_batch_;
  int64_t response_cap_, capacity_;  // capacity_: tokens of one DP group
  int64_t max_steps_, steps_ = 0;
  std::deque<Queued> queue_;
  std::vector<Active> active_;  // a heap on done_after (smallest on top)
  int64_t decoded_ = 0, context_ = 0;
  // Tokens reserved per attention-DP group: a sequence's cache lives in one
  // group, so the instance's capacity is not one pool.
  std::vector<int64_t> reserved_;
};

// One iteration's sequences from an idle instance until all are done.
InstanceIteration SimulateRollout(const InferenceCost& cost, int max_batch,
                                  const std::vector<RolloutSequence>& seqs,
                                  int64_t response_cap, TimeNs start, int iteration);

}  // namespace moetrace::tracegen::rl
