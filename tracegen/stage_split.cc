#include "tracegen/stage_split.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moetrace::tracegen {

namespace {

using Score = std::array<double, 4>;

Score Evaluate(const std::vector<double>& prefix, const std::vector<int>& counts, double first_extra,
               double last_extra, int pp) {
  const int slices = int(counts.size());
  std::vector<double> rank(size_t(pp), 0.0);
  Score s{0, 0, 0, 0};
  int at = 0;
  for (int i = 0; i < slices; ++i) {
    double c = prefix[size_t(at + counts[i])] - prefix[size_t(at)];
    at += counts[i];
    if (i == 0) c += first_extra;
    if (i == slices - 1) c += last_extra;
    rank[size_t(i % pp)] += c;
    s[1] = std::max(s[1], c);
    s[3] += c * c;
  }
  for (double r : rank) {
    s[0] = std::max(s[0], r);
    s[2] += r * r;
  }
  return s;
}

// Lexicographic, with a relative tolerance so that rounding noise in the
// sums does not count as an improvement (the search must stop).
bool Better(const Score& a, const Score& b) {
  for (int k = 0; k < 4; ++k) {
    const double tol = 1e-9 * std::max(std::abs(a[k]), std::abs(b[k]));
    if (a[k] < b[k] - tol) return true;
    if (a[k] > b[k] + tol) return false;
  }
  return false;
}

// Local search from `counts` (modified in place) to a split no single
// layer move improves.
void Descend(const std::vector<double>& prefix, std::vector<int>& counts, double first_extra, double last_extra,
             int pp) {
  const int slices = int(counts.size()), layers = int(prefix.size()) - 1;
  Score best = Evaluate(prefix, counts, first_extra, last_extra, pp);
  // Each round takes the best move of one layer from a slice to another
  // (the boundaries between them shift by one; a move to the next slice
  // alone gets stuck where the first key has a plateau, e.g. heavy dense
  // layers that need two slices to shift). Every move strictly improves a
  // bounded order, so the rounds end; layers*slices bounds them anyway.
  // A slice keeps >= 1 layer, but the last may keep none when it has work
  // of its own (LM head, MTP modules): Megatron's pipeline layouts allow a
  // last stage of MTP and loss only ("...|mL").
  auto floor_of = [&](int i) { return i == slices - 1 && last_extra > 0 ? 0 : 1; };
  for (int round = 0; round < layers * slices; ++round) {
    int move_from = -1, move_to = -1;
    Score move_score = best;
    for (int i = 0; i < slices; ++i) {
      if (counts[size_t(i)] <= floor_of(i)) continue;
      for (int j = 0; j < slices; ++j) {
        if (j == i) continue;
        --counts[size_t(i)];
        ++counts[size_t(j)];
        Score sc = Evaluate(prefix, counts, first_extra, last_extra, pp);
        ++counts[size_t(i)];
        --counts[size_t(j)];
        if (Better(sc, move_score)) {
          move_score = sc;
          move_from = i;
          move_to = j;
        }
      }
    }
    if (move_from < 0) break;
    --counts[size_t(move_from)];
    ++counts[size_t(move_to)];
    best = move_score;
  }
}

std::vector<double> Prefix(const std::vector<double>& layer_cost) {
  std::vector<double> prefix(layer_cost.size() + 1, 0.0);
  for (size_t l = 0; l < layer_cost.size(); ++l) prefix[l + 1] = prefix[l] + layer_cost[l];
  return prefix;
}

}  // namespace

std::array<double, 4> SplitScore(const std::vector<double>& layer_cost, double first_extra, double last_extra,
                                 const std::vector<int>& counts, int pp) {
  pp = std::max(1, std::min(pp, int(counts.size())));
  return Evaluate(Prefix(layer_cost), counts, first_extra, last_extra, pp);
}

std::vector<int> BalancedSplit(const std::vector<double>& layer_cost, double first_extra,
                               double last_extra, int slices, int pp, const std::vector<int>& baseline) {
  const int layers = int(layer_cost.size());
  if (slices <= 0 || layers < slices) return {};
  pp = std::max(1, std::min(pp, slices));
  const std::vector<double> prefix = Prefix(layer_cost);
  // The even split (model.cc's): the remainder to the middle slices.
  std::vector<int> counts(size_t(slices), layers / slices);
  const int extra = layers % slices;
  for (int i = 0; i < extra; ++i) ++counts[size_t((slices - extra) / 2 + i)];
  Descend(prefix, counts, first_extra, last_extra, pp);
  int sum = 0;
  for (int c : baseline) sum += c;
  if (int(baseline.size()) != slices || sum != layers) return counts;
  // From the baseline: its end is never worse than the baseline, and the
  // even split's end is taken only when strictly better than it.
  std::vector<int> from_base = baseline;
  Descend(prefix, from_base, first_extra, last_extra, pp);
  if (Better(Evaluate(prefix, counts, first_extra, last_extra, pp),
             Evaluate(prefix, from_base, first_extra, last_extra, pp)))
    return counts;
  return from_base;
}

}  // namespace moetrace::tracegen
