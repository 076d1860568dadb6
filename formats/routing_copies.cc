#include "formats/routing_copies.h"

#include <vector>

namespace moetrace {

bool CopyListsWellFormed(const RoutingRecord& r) {
  const size_t n = r.copy_expert.size();
  if (n == 0 && r.copy_ep_rank.empty() && r.copy_tokens.empty()) return true;
  if (r.copy_ep_rank.size() != n || r.copy_tokens.size() != n) return false;
  const size_t experts = r.tokens_per_expert.size();
  // What the copies of each expert took so far (the size of the record's own
  // list: bounded by what was read, never by a value). Kept per thread: a
  // trace with redundant experts has copies in every MoE record.
  thread_local std::vector<int64_t> taken;
  taken.assign(experts, 0);
  for (size_t k = 0; k < n; ++k) {
    const int32_t e = r.copy_expert[k], ep = r.copy_ep_rank[k];
    const int64_t t = r.copy_tokens[k];
    if (e < 0 || static_cast<size_t>(e) >= experts) return false;
    if (ep < 0 || (r.ep_size > 0 && ep >= r.ep_size)) return false;
    if (t < 0) return false;
    int64_t& sum = taken[static_cast<size_t>(e)];
    // Compared as remaining tokens: a sum of counts near INT64_MAX cannot overflow.
    if (t > r.tokens_per_expert[static_cast<size_t>(e)] - sum) return false;
    sum += t;
  }
  return true;
}

void DropMalformedCopyLists(Rank* rank) {
  int64_t dropped = 0;
  for (RoutingRecord& r : rank->routing) {
    if (CopyListsWellFormed(r)) continue;
    r.copy_expert.clear();
    r.copy_ep_rank.clear();
    r.copy_tokens.clear();
    ++dropped;
  }
  if (dropped > 0) rank->AddStat("skipped.routing.copy_lists", dropped);
}

}  // namespace moetrace
