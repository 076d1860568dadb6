#include "formats/native/column_decode_avx512.h"

#include <algorithm>

#include "formats/native/simd_level.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOETRACE_DECODE_AVX512 1
#include <immintrin.h>
#endif

namespace moetrace::native::avx512_decode {

#ifndef MOETRACE_DECODE_AVX512

bool Usable() { return false; }
// Never called: callers check Usable() first.
bool Decode(int, bool, bool, const Column&, size_t, int64_t*, uint64_t*) { return true; }
bool Decode(int, bool, bool, const Column&, size_t, int64_t*, uint32_t*) { return true; }
bool Decode(int, bool, bool, const Column&, size_t, int64_t*, uint16_t*) { return true; }
bool Decode(int, bool, bool, const Column&, size_t, int64_t*, uint8_t*) { return true; }

#else

bool Usable() {
  static const bool cpu = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("bmi2");
  const int cap = SimdLevelCap();
  return cpu && (cap < 0 || cap >= 3);
}

namespace {

// expand[w]: byte 8j + b of the output lane j takes input byte j*w + b
// (b < w; the other bytes are zeroed by kLaneBytes[w]).
struct ExpandTables {
  alignas(64) uint8_t index[9][64];
  uint64_t lane_bytes[9];
  constexpr ExpandTables() : index(), lane_bytes() {
    for (int w = 0; w <= 8; ++w) {
      lane_bytes[w] = 0;
      for (int j = 0; j < 8; ++j) {
        for (int b = 0; b < 8; ++b) {
          index[w][8 * j + b] = static_cast<uint8_t>(b < w ? j * w + b : 0);
          if (b < w) lane_bytes[w] |= uint64_t{1} << (8 * j + b);
        }
      }
    }
  }
};
constexpr ExpandTables kTables;

}  // namespace

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,bmi2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512vbmi", "bmi2")
// GCC 12's intrinsics pass _mm512_undefined_*() as the merge source that a
// full mask never reads; -Wuninitialized flags it at every inlined use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

enum { kPacked = 0, kDelta = 1, kGap = 2 };

// Stores lanes [0, 8) of v, narrowed to U; `stream`: non-temporal (out is
// aligned to 8 * sizeof(U)).
template <typename U, bool Stream>
inline void StoreAll(U* out, __m512i v) {
  if constexpr (sizeof(U) == 8) {
    if constexpr (Stream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(out), v);
    } else {
      _mm512_storeu_si512(out, v);
    }
  } else if constexpr (sizeof(U) == 4) {
    const __m256i x = _mm512_maskz_cvtepi64_epi32(0xff, v);
    if constexpr (Stream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out), x);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), x);
    }
  } else if constexpr (sizeof(U) == 2) {
    const __m128i x = _mm512_maskz_cvtepi64_epi16(0xff, v);
    if constexpr (Stream) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(out), x);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), x);
    }
  } else {
    const __m128i x = _mm512_maskz_cvtepi64_epi8(0xff, v);
    if constexpr (Stream) {
      _mm_stream_si64(reinterpret_cast<long long*>(out), _mm_cvtsi128_si64(x));
    } else {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out), x);
    }
  }
}

// Stores the lanes of v selected by k (low lanes), narrowed to U.
template <typename U>
inline void StoreSome(U* out, __mmask8 k, __m512i v) {
  if constexpr (sizeof(U) == 8) {
    _mm512_mask_storeu_epi64(out, k, v);
  } else if constexpr (sizeof(U) == 4) {
    _mm512_mask_cvtepi64_storeu_epi32(out, k, v);
  } else if constexpr (sizeof(U) == 2) {
    _mm512_mask_cvtepi64_storeu_epi16(out, k, v);
  } else {
    _mm512_mask_cvtepi64_storeu_epi8(out, k, v);
  }
}

template <typename U, int X, bool Check, bool Stream>
bool Kernel(const Column& c, size_t m, int64_t* prev_io, U* out) {
  const uint32_t w = c.width;
  const uint8_t* p = c.data;
  const __m512i index = _mm512_load_si512(kTables.index[w]);
  const __mmask64 lane_bytes = kTables.lane_bytes[w];
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(c.base));
  const __m512i lo = _mm512_set1_epi64(c.lo), hi = _mm512_set1_epi64(c.hi);
  const __m512i zero = _mm512_setzero_si512();
  __m512i carry = _mm512_set1_epi64(*prev_io);
  __mmask8 bad = 0;
  // Decodes rows [i, i + n) (n in 1..8) into the lanes [0, n) of the result.
  auto rows = [&](size_t i, unsigned n) {
    const __mmask8 k = static_cast<__mmask8>(_bzhi_u32(0xff, n));
    __m512i u = zero;
    if (w != 0) {
      const __mmask64 bytes = _bzhi_u64(~uint64_t{0}, n * w);
      u = _mm512_maskz_permutexvar_epi8(lane_bytes, index,
                                         _mm512_maskz_loadu_epi8(bytes, p + i * w));
    }
    __m512i v = _mm512_maskz_add_epi64(k, u, base);
    if constexpr (X != kPacked) {
      __m512i d = zero;
      if constexpr (X == kGap) {
        // Row j also adds the duration of row j - 1 (row 0's is in carry).
        d = _mm512_maskz_loadu_epi64(k, c.dur + i);
        v = _mm512_add_epi64(v, _mm512_alignr_epi64(d, zero, 7));
      }
      v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, zero, 7));
      v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, zero, 6));
      v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, zero, 4));
      v = _mm512_add_epi64(v, carry);
      const __m512i last = _mm512_set1_epi64(n - 1);
      carry = _mm512_permutexvar_epi64(last, X == kGap ? _mm512_add_epi64(v, d) : v);
    }
    if constexpr (Check) {
      bad |= _mm512_mask_cmplt_epi64_mask(k, v, lo) | _mm512_mask_cmpgt_epi64_mask(k, v, hi);
    }
    return v;
  };
  size_t i = 0;
  if constexpr (Stream) {
    // Unaligned head rows, so that the full steps store whole aligned lines.
    const uintptr_t align = 8 * sizeof(U);
    const size_t head =
        std::min<size_t>(m, (align - reinterpret_cast<uintptr_t>(out) % align) % align / sizeof(U));
    if (head > 0) {
      StoreSome(out, static_cast<__mmask8>(_bzhi_u32(0xff, static_cast<unsigned>(head))),
                rows(0, static_cast<unsigned>(head)));
      i = head;
    }
  }
  for (; i + 8 <= m; i += 8) StoreAll<U, Stream>(out + i, rows(i, 8));
  if (i < m) {
    const unsigned n = static_cast<unsigned>(m - i);
    StoreSome(out + i, static_cast<__mmask8>(_bzhi_u32(0xff, n)), rows(i, n));
  }
  if constexpr (X != kPacked) *prev_io = _mm_cvtsi128_si64(_mm512_castsi512_si128(carry));
  return bad != 0;
}

template <typename U, int X>
bool Pick(bool check, bool stream, const Column& c, size_t m, int64_t* prev, U* out) {
  if (check) {
    return stream ? Kernel<U, X, true, true>(c, m, prev, out)
                  : Kernel<U, X, true, false>(c, m, prev, out);
  }
  return stream ? Kernel<U, X, false, true>(c, m, prev, out)
                : Kernel<U, X, false, false>(c, m, prev, out);
}

}  // namespace

bool Decode(int transform, bool check, bool stream, const Column& c, size_t m, int64_t* prev,
            uint64_t* out) {
  switch (transform) {
    case kPacked: return Pick<uint64_t, kPacked>(check, stream, c, m, prev, out);
    case kDelta: return Pick<uint64_t, kDelta>(check, stream, c, m, prev, out);
    default: return Pick<uint64_t, kGap>(check, stream, c, m, prev, out);
  }
}

// Narrow outputs: GAP only applies to start times (uint64_t).
#define MOETRACE_NARROW_DECODE(U)                                                          \
  bool Decode(int transform, bool check, bool stream, const Column& c, size_t m,           \
              int64_t* prev, U* out) {                                                     \
    return transform == kPacked ? Pick<U, kPacked>(check, stream, c, m, prev, out)         \
                                : Pick<U, kDelta>(check, stream, c, m, prev, out);         \
  }
MOETRACE_NARROW_DECODE(uint32_t)
MOETRACE_NARROW_DECODE(uint16_t)
MOETRACE_NARROW_DECODE(uint8_t)
#undef MOETRACE_NARROW_DECODE

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

#endif  // MOETRACE_DECODE_AVX512

}  // namespace moetrace::native::avx512_decode
