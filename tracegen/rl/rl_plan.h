// The plan of an RL post-training run: what every card does when, computed
// by the RL model (rl_model.cc) before any event is emitted, as the engine's
// pass 1 is for pre-training. The emitter (rl_emit.cc) turns a plan into
// per-card event streams and ground-truth labels without changing a time:
// the labels and the trace agree by construction.
//
// Times are ns from the trace start (the emitter adds kBaseTime).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "formats/trace.h"
#include "tracegen/proto/run_config.pb.h"

namespace moetrace::tracegen {
class Engine;
}

namespace moetrace::tracegen::rl {

// A phase is a verl / MindSpeed-RL task; the marker range emitted for it is
// named "<role>/<task>" (tracegen/rl/README.md).
enum class Task : uint8_t {
  kGenerateSequences,  // rollout: prefill + decode               role rollout
  kComputeLogProb,     // old log-probs of the responses           role actor
  kComputeRefLogProb,  // reference model forward                  role ref
  kComputeRmScore,     // reward model forward                     role reward
  kComputeValues,      // critic forward (PPO)                     role critic
  kUpdateActor,        // actor training (the pre-training engine) role actor
  kUpdateCritic,       // critic training (PPO)                    role critic
  kReshardToTrain,     // colocated: inference -> training layout (weights, optimizer reload)
  kReshardToInfer,     // colocated: training -> inference layout (weights, optimizer offload)
  kSyncWeights,        // separate: new actor weights sent to the rollout pool
};
inline constexpr int kTaskCount = 10;
std::string_view TaskName(Task t);  // "generate_sequences", ...
std::string_view RoleName(Task t);  // "rollout", "actor", "ref", "reward", "critic"

// One phase on one card. The costs let the emitter place device events
// inside the range: compute (flops, bytes read), a collective (resharding,
// weight sync, scoring's EP traffic) and a host<->device copy (optimizer
// offload / reload). Zero = none.
struct PhaseSpan {
  int32_t iteration = 0;
  Task task = Task::kGenerateSequences;
  TimeNs start = 0, end = 0;
  uint64_t flops = 0, bytes = 0;
  TimeNs comm_dur = 0;
  uint64_t comm_bytes = 0;
  TimeNs copy_dur = 0;
  uint64_t copy_bytes = 0;
};

// One decode step (or prefill chunk) of a rollout instance: every card of
// the instance runs it at the same time.
struct RolloutStep {
  TimeNs start = 0, dur = 0;
  bool prefill = false;
  int32_t batch = 0;        // sequences in the step
  int64_t new_tokens = 0;   // tokens produced (decode) or read in (prefill)
  int64_t kv_bytes = 0;     // KV cache held per card after the step
  uint64_t flops = 0, bytes = 0;  // per card
  TimeNs comm_dur = 0;      // per-step EP / TP collective time inside dur
  uint64_t comm_bytes = 0;  // EP all-to-all bytes one card sends (InferenceCost::CommBytes)
  TimeNs tp_comm_dur = 0;   // of which the TP all-reduce (emitted apart from the EP all-to-all)
};

// A rollout instance's work in one iteration.
struct InstanceIteration {
  int32_t iteration = 0;
  TimeNs start = 0, end = 0;  // end: its last sequence done
  std::vector<RolloutStep> steps;
  int64_t generated_tokens = 0;
};

struct RolloutInstance {
  std::vector<int32_t> cards;
  std::vector<InstanceIteration> iterations;
};

struct CardPlan {
  std::vector<PhaseSpan> phases;  // sorted by start; ranges never overlap on a card
  int32_t instance = -1;          // rollout instance (-1: none)
  int32_t train_rank = -1;        // rank in the training layout (-1: none)
};

struct Plan {
  RunConfig config;               // resolved, validated
  int32_t cards = 0;
  std::vector<CardPlan> card;     // by card
  std::vector<RolloutInstance> instances;
  // BF16 weights one rollout card holds in the inference layout
  // (InferenceCost::WeightBytesPerCard): a card that only rolls out (separate
  // placement) holds them for the whole run.
  int64_t infer_weight_bytes = 0;
  // The training layout's run (actor update, one iteration's update_steps
  // steps), simulated once: pass 2 of train_engine emits a train rank's
  // events, shifted to start at that card's kUpdateActor start. Every
  // iteration repeats it.
  RunConfig train_config;
  std::shared_ptr<Engine> train_engine;
  std::vector<int64_t> response_lengths;  // per sequence of iteration 0, as drawn
  std::vector<int64_t> generated_tokens;  // per iteration
  std::vector<int64_t> trained_tokens;    // per iteration
  // Added by the RL model: per iteration, weight versions its rollout lagged
  // behind (0 synchronous; up to rl.staleness with StaleSync).
  std::vector<int32_t> staleness;
  // Job-level ground truth (rank -1, step = iteration), keys as paths below
  // rl.iterations[i] (time_ns, phases.<task>.time_ns, phases.<task>.card_ns,
  // busy_card_ns, long_tail_idle_card_ns, switch_ns, generated_tokens,
  // trained_tokens, staleness).
  std::vector<LabeledValue> labels;
};

// The plan of `config` (config.rl().algorithm() non-empty, validated).
// `threads`: for the training engine's pass 1.
Plan BuildPlan(const RunConfig& config, int threads = 1);

}  // namespace moetrace::tracegen::rl
