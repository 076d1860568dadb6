// numpy 1.24's argsort(kind="quicksort") (an unstable introsort), ported
// exactly (hta-compat.md Appendix A): HTA sorts by `ts` alone, so rows with
// equal keys come out in numpy's order, which decides ties in the idle
// breakdown and in interval merging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace moetrace::hta {

namespace detail {

template <typename Key>
void HeapSortRange(const Key* k, uint32_t* p, int64_t n) {
  uint32_t* a = p - 1;  // 1-based view
  auto sift = [&](int64_t i, int64_t m, uint32_t x) {
    int64_t j = 2 * i;
    while (j <= m) {
      if (j < m && k[a[j]] < k[a[j + 1]]) ++j;
      if (k[x] < k[a[j]]) {
        a[i] = a[j];
        i = j;
        j = 2 * j;
      } else {
        break;
      }
    }
    a[i] = x;
  };
  for (int64_t l = n / 2; l >= 1; --l) sift(l, n, a[l]);
  int64_t m = n;
  while (m > 1) {
    uint32_t x = a[m];
    a[m] = a[1];
    --m;
    sift(1, m, x);
  }
}

}  // namespace detail

// Writes into `p` the permutation numpy's quicksort argsort gives for keys
// k[0..n-1]. `p` is resized; no allocation when it has the capacity.
template <typename Key>
void NumpyArgsort(const Key* k, size_t n, std::vector<uint32_t>* out) {
  std::vector<uint32_t>& p = *out;
  p.resize(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i);
  if (n < 2) return;
  int depth_limit = 0;
  for (size_t m = n; m > 1; m >>= 1) ++depth_limit;
  --depth_limit;  // floor(log2(n))
  int budget = 2 * depth_limit;
  struct Frame { int64_t lo, hi; int budget; };
  Frame stack[128];
  int sp = 0;
  int64_t lo = 0, hi = static_cast<int64_t>(n) - 1;
  for (;;) {
    if (budget < 0) {
      detail::HeapSortRange(k, p.data() + lo, hi - lo + 1);
    } else {
      while (hi - lo > 15) {
        int64_t mid = lo + (hi - lo) / 2;
        if (k[p[mid]] < k[p[lo]]) std::swap(p[mid], p[lo]);
        if (k[p[hi]] < k[p[mid]]) std::swap(p[hi], p[mid]);
        if (k[p[mid]] < k[p[lo]]) std::swap(p[mid], p[lo]);
        const Key pivot = k[p[mid]];
        std::swap(p[mid], p[hi - 1]);
        int64_t i = lo, j = hi - 1;
        for (;;) {
          do ++i; while (k[p[i]] < pivot);
          do --j; while (pivot < k[p[j]]);
          if (i >= j) break;
          std::swap(p[i], p[j]);
        }
        std::swap(p[i], p[hi - 1]);
        --budget;
        if (i - lo < hi - i) {
          stack[sp++] = {i + 1, hi, budget};
          hi = i - 1;
        } else {
          stack[sp++] = {lo, i - 1, budget};
          lo = i + 1;
        }
      }
      for (int64_t a = lo + 1; a <= hi; ++a) {
        uint32_t x = p[a];
        int64_t b = a;
        while (b > lo && k[x] < k[p[b - 1]]) {
          p[b] = p[b - 1];
          --b;
        }
        p[b] = x;
      }
    }
    if (sp == 0) return;
    --sp;
    lo = stack[sp].lo;
    hi = stack[sp].hi;
    budget = stack[sp].budget;
  }
}

// numpy's pairwise summation of doubles (hta-compat.md Appendix B).
double PairwiseSum(const double* a, size_t n);
// Kahan summation in order.
struct KahanSum {
  double s = 0, c = 0;
  void Add(double x) {
    double y = x - c;
    double t = s + y;
    c = (t - s) - y;
    s = t;
  }
};
// numpy's round(v, 2): nearbyint(v * 100) / 100, ties to even.
double Round2(double v);

}  // namespace moetrace::hta
