// Lookups the graph transforms share: device ops by (rank, track, event),
// collectives matched across ranks (group and sequence, every member
// present), and device ops by (step, micro-batch, layer).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/replay/event_edits.h"
#include "formats/trace.h"

namespace moetrace::replay {

struct MemberRef {
  int32_t r = 0, t = 0;  // rank index, track
  int64_t i = 0;         // event
};

inline uint64_t PackRef(size_t r, size_t t, size_t i) {
  return (uint64_t(r) << 44) | (uint64_t(t) << 32) | uint64_t(i);
}

class CollectiveGroups {
 public:
  explicit CollectiveGroups(const Trace& trace);
  // Matched group of a collective op, -1 when unmatched.
  int64_t GroupOf(size_t r, size_t t, size_t i) const;
  const std::vector<MemberRef>& Members(int64_t g) const { return groups_[size_t(g)]; }
  size_t size() const { return groups_.size(); }
  // The transfer after the last arrival: the smallest current member duration.
  TimeNs Transfer(const EventEdits& edits, int64_t g) const;

 private:
  std::vector<std::vector<MemberRef>> groups_;
  std::unordered_map<uint64_t, int64_t> of_;
};

// Device ops of one rank keyed by (step, micro-batch, layer).
uint64_t WorkKey(int32_t step, int32_t mb, int32_t layer);

// The CommRecord of a device op, or null.
const CommRecord* CommOf(const Track& track, size_t i);

// Node of a rank (devices_per_node > 0).
inline int32_t NodeOf(int32_t rank, int devices_per_node) { return rank / devices_per_node; }

}  // namespace moetrace::replay
