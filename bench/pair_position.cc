#include "bench/pair_position.h"

#include <algorithm>
#include <set>

namespace moetrace::bench {

std::vector<PairPos> ClassifyPairPositions(const std::vector<ChunkOp>& ops) {
  std::set<int32_t> layers;
  for (const ChunkOp& o : ops)
    if (o.layer >= 0) layers.insert(o.layer);
  std::map<int32_t, int> chunk_of;  // layer -> index of its run of consecutive ids
  int chunk = -1, prev = -2;
  for (int32_t l : layers) {
    if (l != prev + 1) ++chunk;
    chunk_of[l] = chunk;
    prev = l;
  }
  using Key = std::tuple<int32_t, bool, int>;  // micro-batch, backward, chunk
  std::map<Key, std::pair<int64_t, int64_t>> span;
  std::vector<Key> key(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const ChunkOp& o = ops[i];
    if (o.micro_batch < 0) continue;
    key[i] = {o.micro_batch, o.backward, o.layer >= 0 ? chunk_of[o.layer] : 0};
    auto [it, fresh] = span.try_emplace(key[i], o.start, o.end);
    if (!fresh) it->second = {std::min(it->second.first, o.start), std::max(it->second.second, o.end)};
  }
  // Spans of each direction sorted by start, to find an overlapping one.
  std::vector<std::pair<int64_t, int64_t>> dir[2];
  for (auto& [k, s] : span) dir[std::get<1>(k)].push_back(s);
  for (auto& d : dir) std::sort(d.begin(), d.end());
  std::map<Key, PairPos> pos;
  for (auto& [k, s] : span) {
    const auto& other = dir[!std::get<1>(k)];
    bool paired = false;
    for (auto& o : other) {
      if (o.first >= s.second) break;
      if (o.second > s.first) { paired = true; break; }
    }
    pos[k] = paired ? kPosPair : std::get<1>(k) ? kPosCooldown : kPosWarmup;
  }
  std::vector<PairPos> out(ops.size(), kPosOther);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].micro_batch >= 0) out[i] = pos[key[i]];
  return out;
}

}  // namespace moetrace::bench
