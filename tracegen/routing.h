// Expert routing: per-layer expert popularity with skew and drift across
// steps, tokens per expert sampled per rank and micro-batch, and expert
// placement over the EP group (contiguous, or EDPB's balanced migration).
#pragma once

#include <cstdint>
#include <vector>

namespace moetrace::tracegen {

struct RoutingModel {
  uint64_t seed = 1;
  int experts = 0;
  int top_k = 1;
  double skew = 0;   // popularity logits ~ skew * N(0,1)
  double drift = 0;  // per-step random-walk step of the logits

  // Probability that one routing slot picks expert e (sums to 1).
  std::vector<double> Popularity(int layer, int step) const;
  // Tokens each expert receives from `tokens` local tokens (top_k slots each)
  // on rank `rank` for (step, micro-batch, layer); sums to tokens*top_k.
  void SampleCounts(const std::vector<double>& popularity, int64_t tokens, int step, int mb,
                    int layer, int rank, int32_t* out) const;
};

// Expert -> position in the EP group. Contiguous blocks by default; with
// EDPB, greedy longest-processing-time packing of `predicted` loads with the
// same number of experts per rank.
std::vector<int32_t> ContiguousPlacement(int experts, int group);
std::vector<int32_t> BalancedPlacement(const std::vector<double>& predicted, int group);
// `placement` with its positions renumbered so that as many experts as
// possible stay where `current` has them. The positions of a balanced
// placement are interchangeable (every EP rank is the same hardware and each
// holds the same number of experts), so a migration planner moves only the
// experts whose set changed, not whole sets that merely got another number;
// the loads per position are unchanged. Greedy matching: the (new position,
// old position) pair sharing the most experts first, ties to the lowest new,
// then old, position.
std::vector<int32_t> KeepInPlace(const std::vector<int32_t>& placement, const std::vector<int32_t>& current,
                                 int group);
// Redundant experts as DeepSeek's EPLB chooses them: each of `copies` extra
// copies goes to the expert with the highest load per copy (at most one
// copy per EP position), and the copies, heaviest share first, to the
// position with the least load (originals at `placement`, each holder taking
// an equal share) that holds no copy of that expert yet, at most
// ceil(copies / group) copies per position so their memory spreads too.
struct ExpertCopies {
  std::vector<int32_t> expert;    // expert each copy serves
  std::vector<int32_t> position;  // EP position holding the copy
};
ExpertCopies ReplicateExperts(const std::vector<double>& loads, const std::vector<int32_t>& placement,
                              int group, int copies);

// EDPB's migration plan from `current` for the `predicted` loads: swaps of
// two experts, each the swap that most lowers the sum of squared loads
// between the most loaded EP position and another (else the least loaded
// and another), taken while either extreme can move closer to the others.
// Every expert moved costs its weights and optimizer states over the EP
// links, so a planner moves only what rebalancing needs. If that ends with a
// higher maximum load than BalancedPlacement's packing from scratch, the
// packing, renumbered by KeepInPlace. Never less balanced than the packing.
std::vector<int32_t> MigrationPlan(const std::vector<double>& predicted, const std::vector<int32_t>& current,
                                   int group);

// EDPB's migration plan with `copies` redundant copies, planned together as
// DeepSeek's EPLB plans them (deepseek-ai/EPLB, eplb.py: replicate_experts,
// then balanced_packing of the physical experts): the copies chosen by
// ReplicateExperts' rule from `current`, then MigrationPlan's swaps (and its
// packing fallback) over every physical expert, each an equal share of its
// expert's load, never two holders of one expert on one position. The
// swaps keep each position's number of originals (their optimizer states)
// and of copies: originals swap with originals, copies with copies; the
// packing fallback, renumbered by KeepInPlace, keeps every position's
// originals but may hand a copy to another position (copies' memory is
// charged as step 0 placed them, tracegen/README.md). Unlike MigrationPlan,
// no fallback when the packing finds no room (a copy whose only free
// position holds its original): the swaps' plan stands. Placing the copies on top of a plan made without them lands half
// of the hottest expert on a rank the plan had already filled
// (bench/README.md, "redundant"). Without copies, MigrationPlan's plan.
struct PlannedPlacement {
  std::vector<int32_t> placement;  // expert -> position (the originals)
  ExpertCopies copies;
};
PlannedPlacement MigrationPlanWithCopies(const std::vector<double>& predicted, const std::vector<int32_t>& current,
                                         int group, int copies);

// How `count` tokens of one expert split over its `holders` (original first,
// then its copies in order) when sent by EP member `member`: equal shares,
// the remainder one token each from holder `member % holders` on, so no
// holder is systematically heavier.
int64_t CopyShare(int64_t count, int holders, int holder, int member);

}  // namespace moetrace::tracegen
