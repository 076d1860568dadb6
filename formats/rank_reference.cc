#include "formats/rank_reference.h"

#include <algorithm>
#include <unordered_map>

namespace moetrace {

void RankReference::Put(int32_t rank, std::vector<LabeledValue> figures) {
  std::lock_guard<std::mutex> lock(mu_);
  by_rank_[rank] = std::move(figures);
}

std::vector<LabeledValue> RankReference::Take(const std::vector<int32_t>& ranks) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LabeledValue> out;
  for (int32_t r : ranks) {
    auto it = by_rank_.find(r);
    if (it == by_rank_.end()) continue;
    for (LabeledValue& l : it->second) out.push_back(std::move(l));
    by_rank_.erase(it);
  }
  return out;
}

bool HasRankReference(const std::vector<LabeledValue>& reference) {
  return std::any_of(reference.begin(), reference.end(),
                     [](const LabeledValue& l) { return l.key == kRankReferenceKey; });
}

std::vector<LabeledValue> ResolveRankReference(const std::vector<LabeledValue>& reference,
                                               const std::vector<LabeledValue>& from_ranks) {
  // Positions of each rank's figures (a rank id is one rank of the source).
  std::unordered_map<int32_t, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < from_ranks.size(); ++i) by_rank[from_ranks[i].rank].push_back(i);
  std::vector<LabeledValue> out;
  out.reserve(reference.size() + from_ranks.size());
  for (const LabeledValue& l : reference) {
    if (l.key != kRankReferenceKey) {
      out.push_back(l);
      continue;
    }
    auto it = by_rank.find(l.rank);
    if (it == by_rank.end()) continue;
    for (size_t i : it->second) out.push_back(from_ranks[i]);
    by_rank.erase(it);  // one placeholder per rank: a second one adds nothing
  }
  return out;
}

}  // namespace moetrace
