// Role reduction: ranks that share a role -- the same op sequence on their
// device streams (same pipeline stage: same layers, micro-batches, phases,
// collectives) -- are replayed once, through one representative each, so a
// trace of thousands of ranks replays in the memory of a few dozen.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "formats/trace_io.h"

namespace moetrace::replay {

struct RoleMap {
  std::vector<int32_t> role_of;         // [rank id] -> role; -1 = no such rank
  std::vector<int32_t> representative;  // [role] -> the rank id replayed for it
  std::vector<uint64_t> signature;      // [role] -> its RoleSignature
  // The representatives carry their role's envelope (ApplyEnvelopes): their
  // own recorded times are then not the base a change is measured from.
  bool envelope = false;
  int32_t ranks = 0;                    // ranks mapped
  // Whether replaying the representatives saves anything.
  bool Reduces() const { return int32_t(representative.size()) < ranks; }
  int32_t RepresentativeOf(int32_t rank) const;  // -1 when unmapped
};

// Hash of what a role must share: per device stream, each event's name,
// category, phase, layer, micro-batch and step, in order.
uint64_t RoleSignature(const Rank& rank);

// Groups (rank id, signature) pairs; a role's representative is the member
// that computes longest per step in `a` (the one the others wait for at
// their collectives: with envelopes its durations are replaced, but its
// recorded gaps -- the slack the replay keeps -- are the least inflated by
// waiting), ties to the lowest rank id. (Choosing the highest peak memory
// instead made peaks exact on the 718B-like test but steps 0.03% off.)
//
// `coupling` (aligned with `signatures`, optional): each rank's coupling
// groups (CouplingGroups). Ranks linked through them form one unit, and a
// role is then a signature within one unit: units of the same stage only
// meet at the step's DP collectives, and each runs its own critical path.
RoleMap GroupRoles(const std::vector<std::pair<int32_t, uint64_t>>& signatures,
                   const analysis::Analysis& a,
                   const std::vector<std::vector<uint64_t>>* coupling = nullptr);

// Hashes of the groups whose collectives synchronise their members every
// layer (EP and TP: the all-to-alls, the tensor-parallel reductions), sorted
// and unique. DP and pipeline groups meet once a step or pairwise and do not
// couple.
std::vector<uint64_t> CouplingGroups(const Rank& rank);

// The members of a role run the same device ops, but not for the same time
// (each EP rank computes on the tokens routed to it). Their envelope is, per
// device op (the k-th device stream's i-th event), the longest member's
// duration for compute, copies and every other op that works, and the
// shortest for collectives and pipeline transfers, whose recorded time is a
// wait for the last member plus the transfer: the shortest is the transfer
// the last arrival sees. Replaying the representative with the envelope's
// durations gives every collective the arrival of its latest member -- what
// the whole replay computes -- whenever, between two collectives, one
// member is at least as long as the others in every op (tracegen: the
// member that received the most tokens of that layer and micro-batch).
struct RoleEnvelope {
  std::vector<std::vector<TimeNs>> dur;    // [device stream k][event i]
  std::vector<std::vector<uint8_t>> wait;  // [k][i]: a wait (kept shortest)
  int32_t members = 0;
};

// A source that records each rank's signature, event count and its role's
// envelope as it is read (one analysis pass serves all). Same thread safety
// as `inner`.
class RoleSignatureSource : public TraceSource {
 public:
  explicit RoleSignatureSource(const TraceSource& inner);
  const Metadata& metadata() const override { return inner_.metadata(); }
  size_t rank_count() const override { return inner_.rank_count(); }
  Rank ReadRank(size_t index) const override;
  void ReadRankInto(size_t index, Rank* out) const override;
  int32_t RankId(size_t index) const override { return inner_.RankId(index); }
  uint64_t RankBytes(size_t index) const override { return inner_.RankBytes(index); }
  std::string RankPath(size_t index) const override { return inner_.RankPath(index); }
  // (rank id, signature) of the ranks read so far, in index order.
  std::vector<std::pair<int32_t, uint64_t>> Signatures() const;
  // Their coupling groups, aligned with Signatures().
  std::vector<std::vector<uint64_t>> Coupling() const;
  int64_t events() const;  // events of the ranks read
  // The envelope of the ranks read whose role in `roles` is `role` (merged
  // from the partial envelopes kept per signature and largest coupling
  // group while reading); empty (members 0) when more than kMaxEnvelopes
  // partial envelopes were seen (ranks that mostly differ: a reduction
  // would not pay, and the envelopes would cost a rank each).
  RoleEnvelope Envelope(const RoleMap& roles, int32_t role) const;
  static constexpr size_t kMaxEnvelopes = 512;

 private:
  void Record(size_t index, const Rank& rank) const;
  const TraceSource& inner_;
  using PartialKey = std::pair<uint64_t, uint64_t>;  // signature, largest coupling group
  mutable std::vector<std::vector<uint64_t>> coupling_;  // one slot per index
  mutable std::vector<PartialKey> partial_of_;           // one slot per index
  mutable std::mutex mu_;  // guards envelopes_ and too_many_
  mutable std::map<PartialKey, RoleEnvelope> envelopes_;
  mutable bool too_many_ = false;
  mutable std::vector<std::pair<int32_t, uint64_t>> sig_;  // one slot per index
  mutable std::vector<int64_t> events_;
  mutable std::vector<uint8_t> read_;
};

// The representatives of `roles` read from `source` (metadata included).
Trace ReadRepresentatives(const TraceSource& source, const RoleMap& roles);

// Gives each representative in `reps` its role's envelope durations and
// re-times it by a graph replay (so that its timeline is consistent with
// them): the base the reduced replay compares against. Returns false (reps
// unchanged) when an envelope is missing.
// `threads`: the graph replay's workers (0 = one per core).
bool ApplyEnvelopes(const RoleSignatureSource& signed_source, const RoleMap& roles, Trace* reps,
                    int threads = 0);

}  // namespace moetrace::replay
