#include "bench/ep_sample.h"

#include <algorithm>
#include <utility>

namespace moetrace::bench {

void AddEpLabels(const std::vector<LabeledValue>& labels, int step, const std::vector<int32_t>& ranks, EpSum* out) {
  for (const LabeledValue& l : labels) {
    if (l.step != step || !std::binary_search(ranks.begin(), ranks.end(), l.rank)) continue;
    if (l.key == "comm_by_class.EP.total_ns") {
      out->total += l.value;
      ++out->ranks;
    } else if (l.key == "comm_by_class.EP.exposed_ns") {
      out->exposed += l.value;
    }
  }
}

void AddMigration(const Rank& r, int step, EpSum* out) {
  std::vector<std::pair<TimeNs, TimeNs>> busy, mig;
  for (const Track& tr : r.tracks) {
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.step[i] != step) continue;
      if (tr.events.category[i] == Category::kCompute) busy.emplace_back(tr.events.ts[i], tr.events.End(i));
      if (r.strings.Get(tr.events.name[i]) == "ExpertMigration") mig.emplace_back(tr.events.ts[i], tr.events.End(i));
    }
  }
  for (auto [a, b] : mig) {
    TimeNs covered = 0;
    for (auto [c, d] : busy) covered += std::max<TimeNs>(0, std::min(b, d) - std::max(a, c));
    out->mig_total += double(b - a);
    out->mig_exposed += double(b - a - std::min(covered, b - a));
  }
}

void SampleSink::AddRank(const Rank& rank) {
  AddMigration(rank, step_, &migration_[rank.rank]);
  if (std::find(keep_.begin(), keep_.end(), rank.rank) != keep_.end()) trace_.ranks.push_back(rank);
}

EpSum SampleSink::Migration(const std::vector<int32_t>& ranks) const {
  EpSum out;
  for (int32_t r : ranks) {
    auto it = migration_.find(r);
    if (it == migration_.end()) continue;
    out.mig_total += it->second.mig_total;
    out.mig_exposed += it->second.mig_exposed;
  }
  return out;
}

}  // namespace moetrace::bench
