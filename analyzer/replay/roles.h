// Role reduction: ranks that share a role -- the same op sequence on their
// device streams (same pipeline stage: same layers, micro-batches, phases,
// collectives) -- are replayed once, through one representative each, so a
// trace of thousands of ranks replays in the memory of a few dozen.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/proto/analysis.pb.h"
#include "formats/trace_io.h"

namespace moetrace::replay {

struct RoleMap {
  std::vector<int32_t> role_of;         // [rank id] -> role; -1 = no such rank
  std::vector<int32_t> representative;  // [role] -> the rank id replayed for it
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
// their collectives, so its arrival shifts are the ones that count), ties to
// the lowest rank id.
RoleMap GroupRoles(const std::vector<std::pair<int32_t, uint64_t>>& signatures,
                   const analysis::Analysis& a);

// A source that records each rank's signature and event count as it is
// read (one analysis pass serves both). Same thread safety as `inner`.
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
  int64_t events() const;  // events of the ranks read

 private:
  void Record(size_t index, const Rank& rank) const;
  const TraceSource& inner_;
  mutable std::vector<std::pair<int32_t, uint64_t>> sig_;  // one slot per index
  mutable std::vector<int64_t> events_;
  mutable std::vector<uint8_t> read_;
};

// The representatives of `roles` read from `source` (metadata included).
Trace ReadRepresentatives(const TraceSource& source, const RoleMap& roles);

}  // namespace moetrace::replay
