#include "formats/native/varint_decode_avx2.h"

#include <array>

#include "formats/native/simd_level.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOETRACE_VARINT_AVX2 1
#include <immintrin.h>
#endif

namespace moetrace::native::varint_avx2 {

#ifndef MOETRACE_VARINT_AVX2

bool Usable() { return false; }
void DecodeShort(const uint8_t**, const uint8_t*, int64_t**, const int64_t*) {}

#else

bool Usable() {
  static const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  const int cap = SimdLevelCap();
  return cpu && (cap < 0 || cap >= 1);
}

namespace {

// By the 8-bit mask of the bytes of a step where a value starts: byte pairs
// (start, start + 1) to gather into 16-bit lanes, in value order; unused
// lanes gather nothing (0x80).
struct Gathers {
  alignas(16) std::array<std::array<uint8_t, 16>, 256> shuffle;
  Gathers() {
    for (int m = 0; m < 256; ++m) {
      shuffle[m].fill(0x80);
      int lane = 0;
      for (int b = 0; b < 8; ++b) {
        if ((m >> b & 1) == 0) continue;
        shuffle[m][2 * lane] = static_cast<uint8_t>(b);
        shuffle[m][2 * lane + 1] = static_cast<uint8_t>(b + 1);
        ++lane;
      }
    }
  }
};
const Gathers kGathers;

}  // namespace

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2", "popcnt")
#endif

void DecodeShort(const uint8_t** p, const uint8_t* end, int64_t** dst, const int64_t* dst_end) {
  const uint8_t* q = *p;
  int64_t* d = *dst;
  uint32_t carry = 0;  // 1: the step's first byte ends the previous step's last value
  const __m128i low7 = _mm_set1_epi16(0x007f);
  const __m128i high7 = _mm_set1_epi16(0x3f80);
  const __m128i one = _mm_set1_epi16(1);
  while (end - q >= 16 && dst_end - d >= 8) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const uint32_t cont = static_cast<uint32_t>(_mm_movemask_epi8(v));
    const uint32_t after_cont = (cont << 1) | carry;  // bit i: byte i - 1 continues
    // A byte continuing a value that a continuing byte began: three bytes
    // or more (bytes 0..8 are this step's values').
    if ((cont & after_cont & 0x1ff) != 0) break;
    const uint32_t starts = ~after_cont & 0xff;
    const __m128i gather =
        _mm_load_si128(reinterpret_cast<const __m128i*>(kGathers.shuffle[starts].data()));
    const __m128i x = _mm_shuffle_epi8(v, gather);  // lane: first byte | second << 8
    // The second byte counts only when the first continues (its bit 7).
    const __m128i two = _mm_srai_epi16(_mm_slli_epi16(x, 8), 15);
    const __m128i u =
        _mm_or_si128(_mm_and_si128(x, low7), _mm_and_si128(_mm_and_si128(_mm_srli_epi16(x, 1), high7), two));
    // Zigzag: (u >> 1) ^ -(u & 1); u < 2^14, so the 16-bit result is the
    // value, sign-extended to 64 bits below.
    const __m128i r = _mm_xor_si128(_mm_srli_epi16(u, 1), _mm_sub_epi16(_mm_setzero_si128(), _mm_and_si128(u, one)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_cvtepi16_epi64(r));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4), _mm256_cvtepi16_epi64(_mm_srli_si128(r, 8)));
    d += __builtin_popcount(starts);
    carry = cont >> 7 & 1;
    q += 8;
  }
  *p = q + carry;
  *dst = d;
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // MOETRACE_VARINT_AVX2

}  // namespace moetrace::native::varint_avx2
