#include "analyzer/rank_experts.h"

#include <algorithm>
#include <map>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace moetrace {

double MaxVio(const double* loads, size_t n) {
  if (n == 0) return 0;
  double sum = 0, mx = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += loads[i];
    mx = std::max(mx, loads[i]);
  }
  const double mean = sum / static_cast<double>(n);
  return mean > 0 ? mx / mean - 1 : 0;
}

void CopyLoads::Add(int32_t e, int32_t r, int64_t t) {
  // Indexed: a record's copy list comes from the file and can be long.
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(e)) << 32) | static_cast<uint32_t>(r);
  auto [it, added] = index.try_emplace(key, expert.size());
  if (!added) {
    tokens[it->second] += t;
    return;
  }
  expert.push_back(e);
  ep_rank.push_back(r);
  tokens.push_back(t);
}

void CopyLoads::Add(const RoutingRecord& r) {
  const size_t n = std::min({r.copy_expert.size(), r.copy_ep_rank.size(), r.copy_tokens.size()});
  for (size_t k = 0; k < n; ++k) Add(r.copy_expert[k], r.copy_ep_rank[k], r.copy_tokens[k]);
}

std::vector<double> EpLoads(const std::vector<double>& tokens, const std::vector<int32_t>& placement,
                            int32_t ep, const CopyLoads& copies) {
  const size_t E = tokens.size();
  // An EP size from the file larger than the experts counted is odd (an EP
  // rank holds at least one expert): bounded so it cannot size a huge vector.
  const int32_t g = static_cast<int32_t>(std::clamp<int64_t>(ep, 1, std::max<int64_t>(1, static_cast<int64_t>(E))));
  std::vector<double> out(static_cast<size_t>(g), 0.0);
  auto pos_of = [&](size_t e) {
    const int32_t p = e < placement.size() ? placement[e]
                                           : static_cast<int32_t>(e * static_cast<size_t>(g) / std::max<size_t>(E, 1));
    return static_cast<size_t>(std::clamp(p, 0, g - 1));
  };
  for (size_t e = 0; e < E; ++e) out[pos_of(e)] += tokens[e];
  for (size_t k = 0; k < copies.expert.size(); ++k) {
    const int32_t e = copies.expert[k], r = copies.ep_rank[k];
    // A copy of an expert the records do not count, or on no EP rank: odd, left out.
    if (e < 0 || static_cast<size_t>(e) >= E || r < 0 || r >= g) continue;
    out[pos_of(static_cast<size_t>(e))] -= static_cast<double>(copies.tokens[k]);
    out[static_cast<size_t>(r)] += static_cast<double>(copies.tokens[k]);
  }
  return out;
}

namespace {

// dst[e] += double(src[e]). The x86-64 baseline has no vector conversion
// from int64 to double, so this loop ran one cvtsi2sd per count: 3-4% of
// `analyze` on the 718B trace (65,536 counts a rank). Where the CPU has
// AVX-512 DQ, eight per vcvtqq2pd; each element's conversion (round to
// nearest, as cvtsi2sd) and sum are the same, so are the results.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f,avx512dq"))) void AddAsDoublesAvx512(double* dst, const int64_t* src,
                                                                    size_t n) {
  size_t e = 0;
  for (; e + 8 <= n; e += 8) {
    const __m512d v = _mm512_cvtepi64_pd(_mm512_loadu_si512(src + e));
    _mm512_storeu_pd(dst + e, _mm512_add_pd(_mm512_loadu_pd(dst + e), v));
  }
  for (; e < n; ++e) dst[e] += static_cast<double>(src[e]);
}
#endif

void AddAsDoubles(double* dst, const int64_t* src, size_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  if (wide) {
    AddAsDoublesAvx512(dst, src, n);
    return;
  }
#endif
  for (size_t e = 0; e < n; ++e) dst[e] += static_cast<double>(src[e]);
}

}  // namespace

bool RankExpertImbalance(const Rank& rank, std::vector<ExpertVio>* steps, ExpertVio* total) {
  steps->clear();
  if (rank.routing.empty()) return false;
  // (step, layer) -> loads per expert, and the record giving the placement.
  struct Layer { std::vector<double> loads; const RoutingRecord* rec = nullptr; CopyLoads copies; };
  std::map<std::pair<int32_t, int32_t>, Layer> layers;
  for (const RoutingRecord& r : rank.routing) {
    // ep_size 0: loads of this rank's own experts (Ascend GroupedMatmul),
    // not the routing of its tokens; the cluster compares those across ranks.
    if (r.ep_size <= 0) continue;
    Layer& l = layers[{r.step, r.layer}];
    if (l.loads.size() < r.tokens_per_expert.size()) l.loads.resize(r.tokens_per_expert.size(), 0);
    AddAsDoubles(l.loads.data(), r.tokens_per_expert.data(), r.tokens_per_expert.size());
    if (!l.rec || !r.expert_to_ep_rank.empty()) l.rec = &r;
    l.copies.Add(r);
  }
  if (layers.empty()) return false;
  std::vector<double> ep;
  double vio = 0, ep_vio = 0;
  int n = 0;
  for (auto it = layers.begin(); it != layers.end();) {
    const int32_t step = it->first.first;
    double s_vio = 0, s_ep = 0;
    int s_n = 0;
    for (; it != layers.end() && it->first.first == step; ++it) {
      const std::vector<double>& v = it->second.loads;
      const RoutingRecord& r = *it->second.rec;
      const size_t E = v.size();
      // The placement of EDPB when recorded, else contiguous blocks; copies moved.
      ep = EpLoads(v, r.expert_to_ep_rank, r.ep_size, it->second.copies);
      s_vio += MaxVio(v.data(), E);
      s_ep += MaxVio(ep.data(), ep.size());
      ++s_n;
    }
    ExpertVio sv;
    sv.step = step;
    sv.max_vio = s_vio / s_n;
    sv.ep_max_vio = s_ep / s_n;
    steps->push_back(sv);
    vio += sv.max_vio;
    ep_vio += sv.ep_max_vio;
    ++n;
  }
  total->step = kNone;
  total->max_vio = vio / n;
  total->ep_max_vio = ep_vio / n;
  return true;
}

}  // namespace moetrace
