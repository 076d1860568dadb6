#include "analyzer/id_range.h"

#include <algorithm>

#include "formats/native/simd_level.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOETRACE_ID_RANGE_AVX2 1
#include <immintrin.h>
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

#ifdef MOETRACE_ID_RANGE_AVX2
bool Avx2Usable() {
  static const bool cpu = __builtin_cpu_supports("avx2");
  const int cap = native::SimdLevelCap();
  return cpu && (cap < 0 || cap >= 1);
}

// Four ids a lane-step, eight a loop step. The unsigned least is a signed
// least of the ids with the sign bit flipped; an absent id (< 0) compares
// greater than -1 fails, so `absent` counts -1 per absent id.
__attribute__((target("avx2"))) void AddIdsAvx2(const int64_t* ids, size_t n, IdRange* r) {
  const __m256i flip = _mm256_set1_epi64x(INT64_MIN);
  const __m256i minus_one = _mm256_set1_epi64x(-1);
  __m256i lo = _mm256_set1_epi64x(static_cast<int64_t>(r->lo_u ^ (uint64_t{1} << 63)));
  __m256i hi = _mm256_set1_epi64x(r->hi);
  __m256i lo2 = lo, hi2 = hi;
  __m256i present = _mm256_setzero_si256(), present2 = present;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + i + 4));
    const __m256i fa = _mm256_xor_si256(a, flip), fb = _mm256_xor_si256(b, flip);
    lo = _mm256_blendv_epi8(lo, fa, _mm256_cmpgt_epi64(lo, fa));
    lo2 = _mm256_blendv_epi8(lo2, fb, _mm256_cmpgt_epi64(lo2, fb));
    hi = _mm256_blendv_epi8(hi, a, _mm256_cmpgt_epi64(a, hi));
    hi2 = _mm256_blendv_epi8(hi2, b, _mm256_cmpgt_epi64(b, hi2));
    present = _mm256_sub_epi64(present, _mm256_cmpgt_epi64(a, minus_one));
    present2 = _mm256_sub_epi64(present2, _mm256_cmpgt_epi64(b, minus_one));
  }
  alignas(32) int64_t l[4], l2[4], h[4], h2[4], p[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(l2), lo2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(h), hi);
  _mm256_store_si256(reinterpret_cast<__m256i*>(h2), hi2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(p), _mm256_add_epi64(present, present2));
  IdRange out = *r;
  for (int k = 0; k < 4; ++k) {
    out.lo_u = std::min({out.lo_u, static_cast<uint64_t>(l[k]) ^ (uint64_t{1} << 63),
                         static_cast<uint64_t>(l2[k]) ^ (uint64_t{1} << 63)});
    out.hi = std::max({out.hi, h[k], h2[k]});
    out.present += p[k];
  }
  AddIdsScalar(ids + i, n - i, &out);
  *r = out;
}
#endif

}  // namespace

void AddIds(const int64_t* ids, size_t n, IdRange* r) {
#ifdef MOETRACE_ID_RANGE_AVX2
  if (n >= 64 && Avx2Usable()) {
    AddIdsAvx2(ids, n, r);
    return;
  }
#endif
  AddIdsScalar(ids, n, r);
}

}  // namespace moetrace
