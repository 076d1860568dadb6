#include "tracegen/routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tracegen/rng.h"

namespace moetrace::tracegen {

std::vector<double> RoutingModel::Popularity(int layer, int step) const {
  std::vector<double> p(experts);
  double max_logit = -1e300;
  for (int e = 0; e < experts; ++e) {
    Rng r(Key(seed, 0x90b, layer, e));
    double z = r.Normal();
    // Drift: a random walk over steps (each step's increment keyed by step).
    for (int k = 1; k <= step && drift > 0; ++k) z += drift * Rng(Key(seed, 0xd41f7, layer, e, k)).Normal();
    p[e] = skew * z;
    max_logit = std::max(max_logit, p[e]);
  }
  double sum = 0;
  for (double& v : p) sum += (v = std::exp(v - max_logit));
  for (double& v : p) v /= sum;
  return p;
}

void RoutingModel::SampleCounts(const std::vector<double>& popularity, int64_t tokens, int step,
                                int mb, int layer, int rank, int32_t* out) const {
  const int64_t slots = tokens * top_k;
  Rng r(Key(seed, 0x5a3, step, (static_cast<uint64_t>(mb) << 32) | static_cast<uint32_t>(layer),
            rank));
  int64_t total = 0;
  for (int e = 0; e < experts; ++e) {
    // Multinomial marginal ~ Normal(n p, n p (1 - p)), rounded and clamped.
    double mean = slots * popularity[e];
    double sd = std::sqrt(std::max(0.0, mean * (1 - popularity[e])));
    int64_t c = std::llround(mean + sd * r.Normal());
    c = std::clamp<int64_t>(c, 0, slots);
    out[e] = static_cast<int32_t>(c);
    total += c;
  }
  // Keep the exact total: spread the rounding difference one token per
  // expert, starting at a random expert, so that no expert (and no EP rank)
  // is systematically lighter or heavier.
  int64_t diff = slots - total;
  int e = experts > 0 ? static_cast<int>(r.Next() % uint64_t(experts)) : 0;
  while (diff != 0) {
    if (diff > 0) {
      ++out[e];
      --diff;
    } else if (out[e] > 0) {
      --out[e];
      ++diff;
    }
    e = e + 1 == experts ? 0 : e + 1;
  }
}

std::vector<int32_t> ContiguousPlacement(int experts, int group) {
  std::vector<int32_t> out(experts);
  int per = experts / group;
  for (int e = 0; e < experts; ++e) out[e] = e / per;
  return out;
}

std::vector<int32_t> BalancedPlacement(const std::vector<double>& predicted, int group) {
  const int experts = static_cast<int>(predicted.size());
  const int per = experts / group;
  std::vector<int> order(experts);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return predicted[a] > predicted[b]; });
  std::vector<double> load(group, 0);
  std::vector<int> count(group, 0);
  std::vector<int32_t> out(experts, 0);
  for (int e : order) {
    int best = -1;
    for (int g = 0; g < group; ++g) {
      if (count[g] >= per) continue;
      if (best < 0 || load[g] < load[best]) best = g;
    }
    out[e] = best;
    load[best] += predicted[e];
    ++count[best];
  }
  return out;
}

std::vector<int32_t> KeepInPlace(const std::vector<int32_t>& placement, const std::vector<int32_t>& current,
                                 int group) {
  // shared[n * group + o]: experts on new position n that old position o holds.
  std::vector<int> shared(size_t(group) * group, 0);
  for (size_t e = 0; e < placement.size() && e < current.size(); ++e)
    ++shared[size_t(placement[e]) * group + size_t(current[e])];
  std::vector<int32_t> to(group, -1);
  std::vector<bool> taken(group, false);
  for (int k = 0; k < group; ++k) {
    int bn = -1, bo = -1;
    for (int n = 0; n < group; ++n) {
      if (to[n] >= 0) continue;
      for (int o = 0; o < group; ++o)
        if (!taken[o] && (bn < 0 || shared[size_t(n) * group + o] > shared[size_t(bn) * group + bo])) bn = n, bo = o;
    }
    to[bn] = bo;
    taken[bo] = true;
  }
  std::vector<int32_t> out(placement.size());
  for (size_t e = 0; e < placement.size(); ++e) out[e] = to[placement[e]];
  return out;
}

namespace {
double MaxLoad(const std::vector<double>& predicted, const std::vector<int32_t>& placement, int group) {
  std::vector<double> load(group, 0);
  for (size_t e = 0; e < placement.size(); ++e) load[placement[e]] += predicted[e];
  return *std::max_element(load.begin(), load.end());
}
}  // namespace

namespace {
// The swap descent of MigrationPlan over `load` per item (an expert, or a
// physical expert: the originals, then the copies) from positions `out`.
// With `expert_of` (item -> expert) no swap puts two holders of one expert
// on one position (they would carry the whole expert's load there again),
// and originals swap only with originals, copies with copies: each position
// keeps its originals' count (their optimizer states) and its copies'.
void SwapDescent(const std::vector<double>& predicted, const std::vector<int32_t>& expert_of, int group,
                 std::vector<int32_t>& out) {
  const int items = static_cast<int>(predicted.size());
  std::vector<double> load(group, 0);
  for (int e = 0; e < items; ++e) load[out[e]] += predicted[e];
  const int experts = expert_of.empty() ? 0 : *std::max_element(expert_of.begin(), expert_of.end()) + 1;
  std::vector<int> held(size_t(group) * experts, 0);  // holders of each expert per position
  for (int e = 0; e < items && experts > 0; ++e) ++held[size_t(out[e]) * experts + expert_of[e]];
  auto may_swap = [&](int a, int b) {
    if (experts == 0) return true;
    if ((a < experts) != (b < experts)) return false;
    if (expert_of[a] == expert_of[b]) return true;
    return held[size_t(out[b]) * experts + expert_of[a]] == 0 && held[size_t(out[a]) * experts + expert_of[b]] == 0;
  };
  // Swapping a (on p) and b (on q) with d = p_a - p_b between 0 and
  // load[p] - load[q] lowers the sum of squared loads by
  // 2d(load[p] - load[q] - d): each round takes the best such swap between
  // the most loaded position and any other (else the least loaded one and
  // any other), so the loop ends; it stops when neither extreme can move
  // closer to the others. A swap must gain more than rounding can: with
  // d == gap (the two positions trade loads) the computed gap - d may be a
  // stray positive ulp, and the mirror swap would then win for ever.
  auto best_swap = [&](int p, int* ba, int* bb) {
    double gain = 0;
    for (int a = 0; a < items; ++a) {
      if (out[a] != p) continue;
      for (int b = 0; b < items; ++b) {
        const int q = out[b];
        if (q == p) continue;
        const double gap = load[p] - load[q], d = predicted[a] - predicted[b];
        const double g = d * (gap - d);  // > 0 iff d lies strictly between 0 and gap
        if (g > gain && g > 1e-9 * gap * gap && may_swap(a, b)) gain = g, *ba = a, *bb = b;
      }
    }
    return gain;
  };
  // Each round lowers the sum of squared loads; the cap is a safety net.
  for (int64_t round = 0; round < int64_t(items) * group; ++round) {
    int a = -1, b = -1;
    const int hi = int(std::max_element(load.begin(), load.end()) - load.begin());
    if (best_swap(hi, &a, &b) <= 0) {
      const int lo = int(std::min_element(load.begin(), load.end()) - load.begin());
      if (best_swap(lo, &a, &b) <= 0) break;
    }
    const int pa = out[a], pb = out[b];
    const double d = predicted[a] - predicted[b];
    load[pa] -= d;
    load[pb] += d;
    if (experts > 0) {
      --held[size_t(pa) * experts + expert_of[a]], ++held[size_t(pb) * experts + expert_of[a]];
      --held[size_t(pb) * experts + expert_of[b]], ++held[size_t(pa) * experts + expert_of[b]];
    }
    out[a] = pb;
    out[b] = pa;
  }
}

// Greedy longest-processing-time packing of physical experts, each position
// taking as many originals and as many copies as it holds in `start`, and
// at most one holder of an expert; empty if that leaves an item no position.
std::vector<int32_t> PackPhysical(const std::vector<double>& predicted, const std::vector<int32_t>& expert_of,
                                  const std::vector<int32_t>& start, int group) {
  const int items = static_cast<int>(predicted.size());
  const int experts = *std::max_element(expert_of.begin(), expert_of.end()) + 1;
  std::vector<int> room(size_t(2) * group, 0);  // [kind * group + position], kind 1 = copy
  auto kind = [&](int e) { return e < experts ? 0 : 1; };
  for (int e = 0; e < items; ++e) ++room[size_t(kind(e)) * group + start[e]];
  std::vector<int> order(items);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return predicted[a] > predicted[b]; });
  std::vector<double> load(group, 0);
  std::vector<char> has(size_t(group) * experts, 0);
  std::vector<int32_t> out(items, 0);
  for (int e : order) {
    int best = -1;
    for (int g = 0; g < group; ++g) {
      if (room[size_t(kind(e)) * group + g] == 0 || has[size_t(g) * experts + expert_of[e]]) continue;
      if (best < 0 || load[g] < load[best]) best = g;
    }
    if (best < 0) return {};
    out[e] = best;
    load[best] += predicted[e];
    --room[size_t(kind(e)) * group + best];
    has[size_t(best) * experts + expert_of[e]] = 1;
  }
  return out;
}
}  // namespace

std::vector<int32_t> MigrationPlan(const std::vector<double>& predicted, const std::vector<int32_t>& current,
                                   int group) {
  std::vector<int32_t> out = current;
  SwapDescent(predicted, {}, group, out);
  std::vector<int32_t> packed = BalancedPlacement(predicted, group);
  if (MaxLoad(predicted, packed, group) < MaxLoad(predicted, out, group)) return KeepInPlace(packed, current, group);
  return out;
}

PlannedPlacement MigrationPlanWithCopies(const std::vector<double>& predicted, const std::vector<int32_t>& current,
                                         int group, int copies) {
  PlannedPlacement out;
  const ExpertCopies start = ReplicateExperts(predicted, current, group, copies);
  if (start.expert.empty()) {
    out.placement = MigrationPlan(predicted, current, group);
    return out;
  }
  // Physical experts: the originals, then the copies, each carrying an
  // equal share of its expert's load (the engine splits tokens so).
  const int E = static_cast<int>(predicted.size()), P = E + static_cast<int>(start.expert.size());
  std::vector<int> holders(E, 1);
  for (int32_t e : start.expert) ++holders[e];
  std::vector<int32_t> expert_of(P), items = current;
  items.insert(items.end(), start.position.begin(), start.position.end());
  std::vector<double> share(P);
  for (int k = 0; k < P; ++k) {
    expert_of[k] = k < E ? k : start.expert[k - E];
    share[k] = predicted[expert_of[k]] / holders[expert_of[k]];
  }
  const std::vector<int32_t> begin = items;
  SwapDescent(share, expert_of, group, items);
  const std::vector<int32_t> packed = PackPhysical(share, expert_of, begin, group);
  if (!packed.empty() && MaxLoad(share, packed, group) < MaxLoad(share, items, group))
    items = KeepInPlace(packed, begin, group);
  out.placement.assign(items.begin(), items.begin() + E);
  out.copies.expert = start.expert;
  out.copies.position.assign(items.begin() + E, items.end());
  return out;
}

ExpertCopies ReplicateExperts(const std::vector<double>& loads, const std::vector<int32_t>& placement,
                              int group, int copies) {
  ExpertCopies out;
  const int experts = static_cast<int>(loads.size());
  if (copies <= 0 || group <= 1 || experts == 0) return out;
  std::vector<int> holders(experts, 1);
  for (int k = 0; k < copies; ++k) {
    int best = -1;
    for (int e = 0; e < experts; ++e) {
      if (holders[e] >= group) continue;  // already on every position
      if (best < 0 || loads[e] / holders[e] > loads[best] / holders[best]) best = e;
    }
    if (best < 0) break;
    ++holders[best];
  }
  std::vector<double> load(group, 0);
  for (int e = 0; e < experts; ++e) load[placement[e]] += loads[e] / holders[e];
  std::vector<int> order;  // experts with copies, heaviest share first
  for (int e = 0; e < experts; ++e)
    if (holders[e] > 1) order.push_back(e);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return loads[a] / holders[a] > loads[b] / holders[b]; });
  const int cap = (copies + group - 1) / group;
  std::vector<int> held(group, 0);
  std::vector<std::vector<char>> has(group, std::vector<char>(experts, 0));
  for (int e = 0; e < experts; ++e) has[placement[e]][e] = 1;
  for (int e : order) {
    for (int c = 1; c < holders[e]; ++c) {
      int best = -1;
      for (int g = 0; g < group; ++g) {
        if (held[g] >= cap || has[g][e]) continue;
        if (best < 0 || load[g] < load[best]) best = g;
      }
      // The cap can leave no free position without this expert: then any.
      for (int g = 0; best < 0 && g < group; ++g)
        if (!has[g][e]) best = g;
      if (best < 0) break;
      out.expert.push_back(e);
      out.position.push_back(best);
      load[best] += loads[e] / holders[e];
      ++held[best];
      has[best][e] = 1;
    }
  }
  return out;
}

int64_t CopyShare(int64_t count, int holders, int holder, int member) {
  if (holders <= 1) return count;
  const int64_t base = count / holders, rem = count % holders;
  const int64_t slot = (holder - member % holders + holders) % holders;
  return base + (slot < rem ? 1 : 0);
}

}  // namespace moetrace::tracegen
