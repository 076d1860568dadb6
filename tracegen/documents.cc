#include "tracegen/documents.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tracegen/rng.h"

namespace moetrace::tracegen {

double DocumentModel::SequenceLoad(int step, int64_t index) const {
  const double s = seq;
  if (!Active()) return s * s;
  // lognormal: mu chosen so that the mean length is `mean`.
  const double mu = std::log(double(mean)) - 0.5 * sigma * sigma;
  Rng rng(Key(seed, 0xd0c5, uint64_t(step), uint64_t(index)));
  if (distribution != "lognormal") {
    // Fixed lengths: floor(s/m) whole documents and the cut remainder.
    const double m = double(mean), q = std::floor(s / m), r = s - q * m;
    return q * m * m + r * r;
  }
  double load = 0;
  int64_t left = seq;
  while (left > 0) {
    int64_t len = mean;
    if (distribution == "lognormal")
      len = std::max<int64_t>(1, std::llround(std::exp(mu + sigma * rng.Normal())));
    len = std::min(len, left);  // the packer cuts the last document
    load += double(len) * double(len);
    left -= len;
  }
  return load;
}

std::vector<int64_t> RearrangeSequences(const std::vector<double>& loads, int dp, int micro_batches,
                                        int mbs) {
  const int64_t n = int64_t(dp) * micro_batches * mbs;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Ties keep the loader's order: the result is the same on every platform.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return loads[size_t(a)] > loads[size_t(b)]; });
  std::vector<int64_t> slot(static_cast<size_t>(n));
  const int64_t rounds = int64_t(micro_batches) * mbs;
  for (int64_t k = 0; k < rounds; ++k) {
    const int mb = int(k % micro_batches), within = int(k / micro_batches);
    for (int i = 0; i < dp; ++i) {
      // Alternate from one round to the next, and between the rounds of one
      // micro-batch (k / micro_batches), so ranks' totals and each
      // micro-batch's spread both stay within one round's spread.
      const int d = (k + k / micro_batches) % 2 == 0 ? i : dp - 1 - i;
      slot[size_t((int64_t(d) * micro_batches + mb) * mbs + within)] = order[size_t(k * dp + i)];
    }
  }
  return slot;
}

std::vector<double> DocumentModel::AttentionFactors(int step) const {
  const int64_t n = int64_t(dp) * micro_batches * mbs;
  std::vector<double> out(size_t(dp) * micro_batches, Active() ? 0.0 : 1.0);
  if (!Active()) return out;
  std::vector<double> loads(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) loads[size_t(i)] = SequenceLoad(step, i);
  std::vector<int64_t> slot;
  if (rearrange) slot = RearrangeSequences(loads, dp, micro_batches, mbs);
  const double full = double(mbs) * double(seq) * double(seq);
  for (int64_t i = 0; i < n; ++i) {
    const double l = loads[size_t(rearrange ? slot[size_t(i)] : i)];
    out[size_t(i / mbs)] += l / full;
  }
  return out;
}

}  // namespace moetrace::tracegen
