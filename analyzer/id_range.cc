#include "analyzer/id_range.h"

#include <algorithm>
#include <bit>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MOETRACE_ID_RANGE_AVX512 1
#endif

namespace moetrace {
namespace {

void AddIdsScalar(const int64_t* ids, size_t n, IdRange* r) {
  uint64_t lo = r->lo_u;
  int64_t hi = r->hi, present = r->present;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, static_cast<uint64_t>(ids[i]));
    hi = std::max(hi, ids[i]);
    present += ids[i] >= 0;
  }
  *r = {lo, hi, present};
}

#if MOETRACE_ID_RANGE_AVX512
// GCC 12's intrinsics pass _mm512_undefined_*() as the merge source that a
// full mask never reads (here in the reductions); -Wmaybe-uninitialized
// flags it at every inlined use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Min and max are exact in any order, so the result is the scalar loop's.
__attribute__((target("avx512f"))) void AddIdsAvx512(const int64_t* ids, size_t n, IdRange* r) {
  size_t i = 0;
  if (n >= 8) {
    __m512i lo = _mm512_set1_epi64(static_cast<int64_t>(r->lo_u));
    __m512i hi = _mm512_set1_epi64(r->hi);
    const __m512i zero = _mm512_setzero_si512();
    int64_t present = 0;
    for (; i + 8 <= n; i += 8) {
      const __m512i v = _mm512_loadu_si512(ids + i);
      lo = _mm512_min_epu64(lo, v);
      hi = _mm512_max_epi64(hi, v);
      present += std::popcount(static_cast<unsigned>(_mm512_cmpge_epi64_mask(v, zero)));
    }
    r->lo_u = _mm512_reduce_min_epu64(lo);
    r->hi = _mm512_reduce_max_epi64(hi);
    r->present += present;
  }
  AddIdsScalar(ids + i, n - i, r);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void AddIds(const int64_t* ids, size_t n, IdRange* r) {
#if MOETRACE_ID_RANGE_AVX512
  static const bool wide = __builtin_cpu_supports("avx512f");
  if (wide) {
    AddIdsAvx512(ids, n, r);
    return;
  }
#endif
  AddIdsScalar(ids, n, r);
}

}  // namespace moetrace
