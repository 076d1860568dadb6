#include "formats/native/varint_decode_avx512.h"

#include "formats/native/simd_level.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOETRACE_VARINT_AVX512 1
#include <immintrin.h>
#endif

namespace moetrace::native::varint_avx512 {

#ifndef MOETRACE_VARINT_AVX512

bool Usable() { return false; }
void DecodeShort(const uint8_t**, const uint8_t*, int64_t**, const int64_t*) {}

#else

bool Usable() {
  static const bool cpu = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi2") &&
                          __builtin_cpu_supports("popcnt");
  const int cap = SimdLevelCap();
  return cpu && (cap < 0 || cap >= 3);
}

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f", "avx512bw", "avx512vbmi2", "popcnt")
// GCC 12's intrinsics pass _mm512_undefined_*() as the merge source that a
// full mask never reads; -Wuninitialized flags it at every inlined use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

void DecodeShort(const uint8_t** p, const uint8_t* end, int64_t** dst, const int64_t* dst_end) {
  const uint8_t* q = *p;
  int64_t* d = *dst;
  const __m512i low7 = _mm512_set1_epi8(0x7f);
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i zero = _mm512_setzero_si512();
  alignas(64) uint8_t first[64], second[64];
  while (q < end) {
    // The window: 64 bytes, or what is left (masked loads read nothing
    // past `end`); `next` is the same one byte further on, for the
    // values' second bytes.
    const size_t left = static_cast<size_t>(end - q);
    const uint64_t bytes = left >= 64 ? ~uint64_t{0} : (uint64_t{1} << left) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(bytes, q);
    const __m512i next = _mm512_maskz_loadu_epi8(bytes >> 1 | (left > 64 ? uint64_t{1} << 63 : 0), q + 1);
    const uint64_t cont = _mm512_movepi8_mask(v) & bytes;  // bytes whose value goes on
    // Two continuing bytes in a row: a value of three bytes or more.
    if ((cont & (cont << 1)) != 0) break;
    const uint64_t ends = ~cont & bytes;
    if (ends == 0) break;
    // Whole values only: up to the last byte that ends one. A value starts
    // at byte 0 (the caller's position) and after every byte that ends one.
    const int last = 63 - __builtin_clzll(ends);
    const uint64_t in = last == 63 ? ~uint64_t{0} : (uint64_t{1} << (last + 1)) - 1;
    const uint64_t starts = ~(cont << 1) & in;
    const int k = __builtin_popcountll(starts);
    if (k > dst_end - d) break;  // more values than slots: malformed, left to the caller
    // Per value: its first byte's 7 bits, and its second byte's (0 when it
    // has one byte only), packed to the front in value order.
    const __m512i lo = _mm512_maskz_compress_epi8(starts, _mm512_and_si512(v, low7));
    const __m512i hi = _mm512_maskz_compress_epi8(
        starts, _mm512_maskz_mov_epi8(cont, _mm512_and_si512(next, low7)));
    _mm512_store_si512(first, lo);
    _mm512_store_si512(second, hi);
    // Eight values per step, the last one's store masked to the k values.
    for (int j = 0; j < k; j += 8) {
      const __m512i a = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(first + j)));
      const __m512i b = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(second + j)));
      const __m512i u = _mm512_or_si512(a, _mm512_slli_epi64(b, 7));
      // Zigzag: (u >> 1) ^ -(u & 1).
      const __m512i r =
          _mm512_xor_si512(_mm512_srli_epi64(u, 1), _mm512_sub_epi64(zero, _mm512_and_si512(u, one)));
      const __mmask8 keep = k - j >= 8 ? 0xff : static_cast<__mmask8>((1u << (k - j)) - 1);
      _mm512_mask_storeu_epi64(d + j, keep, r);
    }
    q += last + 1;
    d += k;
  }
  *p = q;
  *dst = d;
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

#endif  // MOETRACE_VARINT_AVX512

}  // namespace moetrace::native::varint_avx512
