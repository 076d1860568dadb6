#include "analyzer/replay/transforms/op_index.h"

#include <algorithm>
#include <limits>
#include <string>

namespace moetrace::replay {

const CommRecord* CommOf(const Track& track, size_t i) {
  const int32_t c = track.events.comm[i];
  return c >= 0 && size_t(c) < track.comms.size() ? &track.comms[size_t(c)] : nullptr;
}

uint64_t WorkKey(int32_t step, int32_t mb, int32_t layer) {
  return (uint64_t(uint32_t(step) & 0xfffff) << 40) | (uint64_t(uint32_t(mb) & 0xfffff) << 20) |
         uint64_t(uint32_t(layer) & 0xfffff);
}

CollectiveGroups::CollectiveGroups(const Trace& trace) {
  std::unordered_map<std::string, int64_t> index;
  std::vector<int32_t> expected;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      const Track& tr = rank.tracks[t];
      if (tr.kind != TrackKind::kDeviceStream) continue;
      for (size_t i = 0; i < tr.events.size(); ++i) {
        if (tr.events.category[i] != Category::kCollective) continue;
        const CommRecord* rec = CommOf(tr, i);
        if (!rec || rec->sequence < 0 || rec->group_size < 2) continue;
        std::string key(rank.strings.Get(rec->group));
        key += '#';
        key += std::to_string(rec->sequence);
        auto [it, fresh] = index.emplace(key, int64_t(groups_.size()));
        if (fresh) {
          groups_.emplace_back();
          expected.push_back(rec->group_size);
        }
        groups_[size_t(it->second)].push_back({int32_t(r), int32_t(t), int64_t(i)});
      }
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto& m = groups_[g];
    bool ok = int32_t(m.size()) == expected[g];
    for (size_t a = 0; ok && a < m.size(); ++a) {
      for (size_t b = a + 1; b < m.size(); ++b) ok &= m[a].r != m[b].r;
    }
    if (!ok) continue;
    for (const MemberRef& o : m) of_[PackRef(size_t(o.r), size_t(o.t), size_t(o.i))] = int64_t(g);
  }
}

int64_t CollectiveGroups::GroupOf(size_t r, size_t t, size_t i) const {
  auto it = of_.find(PackRef(r, t, i));
  return it == of_.end() ? -1 : it->second;
}

TimeNs CollectiveGroups::Transfer(const EventEdits& edits, int64_t g) const {
  TimeNs T = std::numeric_limits<TimeNs>::max();
  for (const MemberRef& o : groups_[size_t(g)]) {
    T = std::min(T, edits.dur[size_t(o.r)][size_t(o.t)][size_t(o.i)]);
  }
  return T;
}

}  // namespace moetrace::replay
