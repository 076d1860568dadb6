#include "analyzer/replay/transforms/slow_rank.h"

#include <algorithm>
#include <string>
#include <vector>

#include "formats/errors.h"

namespace moetrace::replay {
namespace {

struct ComputeList {
  std::vector<std::pair<int32_t, int64_t>> ops;  // (track, event) in track then time order
  std::vector<std::string> names;
};

ComputeList ComputeOps(const Rank& rank) {
  ComputeList l;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const Track& tr = rank.tracks[t];
    if (tr.kind != TrackKind::kDeviceStream) continue;
    for (size_t i = 0; i < tr.events.size(); ++i) {
      if (tr.events.category[i] != Category::kCompute) continue;
      l.ops.push_back({int32_t(t), int64_t(i)});
      l.names.emplace_back(rank.strings.Get(tr.events.name[i]));
    }
  }
  return l;
}

}  // namespace

int64_t MatchPeers(const Trace& trace, int32_t rank_number, EventEdits* edits) {
  if (!edits->active) edits->Init(trace);
  size_t target = trace.ranks.size();
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    if (trace.ranks[r].rank == rank_number) target = r;
  }
  if (target == trace.ranks.size()) {
    ThrowInputError("--set", "slow_rank.fix=" + std::to_string(rank_number), "no such rank in the trace");
  }
  const ComputeList mine = ComputeOps(trace.ranks[target]);
  std::vector<ComputeList> peers;
  std::vector<size_t> peer_index;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    if (r == target) continue;
    ComputeList l = ComputeOps(trace.ranks[r]);
    if (l.names == mine.names) {
      peers.push_back(std::move(l));
      peer_index.push_back(r);
    }
  }
  int64_t changed = 0;
  std::vector<TimeNs> v;
  if (!peers.empty()) {
    for (size_t k = 0; k < mine.ops.size(); ++k) {
      v.clear();
      for (size_t p = 0; p < peers.size(); ++p) {
        auto [t, i] = peers[p].ops[k];
        v.push_back(edits->dur[peer_index[p]][size_t(t)][size_t(i)]);
      }
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      auto [t, i] = mine.ops[k];
      edits->dur[target][size_t(t)][size_t(i)] = v[v.size() / 2];
      ++changed;
    }
  } else {
    // No rank runs the same ops: scale to the median compute total of the others.
    auto total = [&](size_t r, const ComputeList& l) {
      TimeNs s = 0;
      for (auto [t, i] : l.ops) s += edits->dur[r][size_t(t)][size_t(i)];
      return s;
    };
    for (size_t r = 0; r < trace.ranks.size(); ++r) {
      if (r != target) v.push_back(total(r, ComputeOps(trace.ranks[r])));
    }
    const TimeNs own = total(target, mine);
    if (v.empty() || own <= 0) return 0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    const double f = std::min(1.0, double(v[v.size() / 2]) / double(own));
    for (auto [t, i] : mine.ops) {
      TimeNs& d = edits->dur[target][size_t(t)][size_t(i)];
      d = TimeNs(double(d) * f);
      ++changed;
    }
  }
  edits->notes.push_back("rank " + std::to_string(rank_number) + " at its peers' speed (" +
                         std::to_string(peers.size()) + " peers)");
  return changed;
}

}  // namespace moetrace::replay
