// One card's RL phases, from its host tracks: the compact list that crosses
// to the job-level figures (and between processes under mpirun).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/rl/rl_task.h"
#include "formats/trace.h"

namespace moetrace::rl {

struct PhaseRange {
  int32_t iteration = 0;
  Task task = Task::kGenerateSequences;
  Role role = Role::kRollout;
  int64_t start = 0, end = 0;
  // generate_sequences: the `generated_tokens` counter's rise over the
  // range (-1: the card has no such counter).
  int64_t tokens = -1;
  bool operator==(const PhaseRange&) const = default;
};

struct CardPhases {
  int32_t rank = 0;
  std::vector<PhaseRange> ranges;  // by start
  int64_t ignored_markers = 0;     // marker ranges with no RL task in their name
  bool operator==(const CardPhases&) const = default;
};

// The phases of `rank`: marker (kMarker) and host-op (kHostOp, Kineto
// user_annotation) ranges on host threads whose names hold an RL task
// (rl_task.h). A range inside another recognised range of the card is left
// out (an annotation nested in verl's MSTX range of the same call). The
// iteration is the event's step when set, else the number of
// generate_sequences ranges that began before it on the card (the first
// iteration's scoring and update follow its rollout). Empty `ranges` when
// the card ran no RL phase.
CardPhases CollectPhases(const Rank& rank);

}  // namespace moetrace::rl
