// The RL emitter: one card of an rl::Plan as a profiler records it. Every
// time comes from the plan (the emitter decides none), so the plan's labels
// and the trace agree by construction. Layout of a card (tracegen/rl/README.md):
// the pre-training engine's tracks (host main thread "python", dequeue,
// streams 0-5, memory counters) plus the counters `kv_cache` and
// `generated_tokens`; a marker range "<role>/<task>" per phase on the main
// thread; the device work of each phase inside its range.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "formats/trace.h"
#include "tracegen/rl/rl_plan.h"

namespace moetrace::tracegen {
class RankEmitter;
}

namespace moetrace::tracegen::rl {

// Plan times are from the trace start; events are written from this
// instant, the pre-training engine's trace start (engine_internal.h's
// kBaseTime), so that an update_actor span is the engine's rank shifted.
inline constexpr TimeNs kRlBaseTime = 1'000'000'000;

// A collective's sequence numbers in iteration i are offset by
// i * kIterationSequenceStride: each group's numbering stays the same on
// every member card whatever the count per iteration.
inline constexpr int64_t kIterationSequenceStride = int64_t(1) << 32;

// The cards running each (iteration, task): the group of that phase's
// collective. Built once per plan, shared by the emitters of every thread.
struct PhaseGroups {
  std::map<std::pair<int32_t, Task>, std::vector<int32_t>> cards;
};
PhaseGroups BuildPhaseGroups(const Plan& plan);

// Emits cards one at a time, reusing its scratch (the training template)
// from one card to the next. Emitters of one plan may run concurrently, one
// per thread, once plan.train_engine has simulated (pass 1).
class CardEmitter {
 public:
  CardEmitter(const Plan& plan, const PhaseGroups& groups);
  ~CardEmitter();
  CardEmitter(const CardEmitter&) = delete;
  CardEmitter& operator=(const CardEmitter&) = delete;
  // Card `card` into *out (overwritten). Throws std::out_of_range for a card
  // outside the plan.
  void Emit(int card, Rank* out);

 private:
  const Plan& plan_;
  const PhaseGroups& groups_;
  std::unique_ptr<RankEmitter> train_;  // null: the plan has no training engine
  Rank template_;                       // the card's train rank, as the engine emits it
};

// One card with a fresh emitter (tests, single cards).
void EmitCard(const Plan& plan, int card, Rank* out);

}  // namespace moetrace::tracegen::rl
