// One card's RL phases, from its host tracks: the compact list that crosses
// to the job-level figures (and between processes under mpirun).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/rl/rl_task.h"
#include "formats/trace.h"

namespace moetrace::rl {

// A range's iteration before AssignIterations when its event has no step.
inline constexpr int32_t kNoIteration = -1;

struct PhaseRange {
  int32_t iteration = 0;  // kNoIteration until AssignIterations when not recorded
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
// out (an annotation nested in verl's MSTX range of the same call; a
// zero-length range at an earlier one's end is not inside it). A bare
// reshard / offload / onload (Recognised::bare) counts only on a card with
// another RL phase. The iteration is the event's step when set, else
// kNoIteration (AssignIterations decides it over every card). Empty
// `ranges` when the card ran no RL phase.
CardPhases CollectPhases(const Rank& rank);

// Iterations of the ranges recorded without a step, over all the cards (a
// training card of separate pools never rolls out): a card's k-th
// generate_sequences is iteration k (wave k, which starts at the earliest of
// them); any other phase belongs to the last wave that started at or before
// it (0 before the first). Runs on the merged cards, so any split of the
// ranks gives the same.
void AssignIterations(std::vector<CardPhases>* cards);

}  // namespace moetrace::rl
