#include "formats/native/column_codec.h"

#include <limits>

#include "formats/native/column_decode_avx512.h"

namespace moetrace::native {
namespace {

// Rows on which the transform of a column is chosen.
constexpr size_t kSample = 1024;

// Whole bytes needed for `range` (0 for 0).
inline uint32_t WidthOf(uint64_t range) {
  return range == 0 ? 0 : static_cast<uint32_t>((64 - __builtin_clzll(range) + 7) / 8);
}

// Smallest and largest of a stream of int64, as a frame of reference.
struct MinMax {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  void Add(int64_t x) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  uint32_t width() const {
    return WidthOf(static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo));
  }
};

// The passes over whole columns, written as plain loops GCC vectorizes;
// each is compiled twice, for the x86-64 baseline and for AVX2 (picked at
// run time), because 64-bit compares (min, max) only vectorize from AVX2.
enum Kind { kPlainKind, kDeltaKind, kGapKind };

// Transformed value of row i (i >= 1 for DELTA and GAP).
template <int X>
[[gnu::always_inline]] inline uint64_t Transformed(const int64_t* v, const int64_t* dur, size_t i) {
  uint64_t t = static_cast<uint64_t>(v[i]);
  if constexpr (X != kPlainKind) t -= static_cast<uint64_t>(v[i - 1]);
  if constexpr (X == kGapKind) t -= static_cast<uint64_t>(dur[i - 1]);
  return t;
}

struct FrameStats {
  int64_t lo, hi;
  size_t changes;  // rows i >= 1 with v[i] != v[i - 1]
};

// Frame of the transformed rows (all rows for plain, from row 1 on
// otherwise) and, when Changes (else 0), the number of value changes.
template <int X, bool Changes>
[[gnu::always_inline]] inline FrameStats FrameImpl(const int64_t* v, const int64_t* dur,
                                                   size_t n) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  if constexpr (X == kPlainKind) lo = hi = v[0];
  size_t changes = 0;
  for (size_t i = 1; i < n; ++i) {
    const int64_t t = static_cast<int64_t>(Transformed<X>(v, dur, i));
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
    if constexpr (Changes) changes += static_cast<size_t>(v[i] != v[i - 1]);
  }
  return {lo, hi, changes};
}

// out[i] = transformed row i - lo in U (row 0 stores 0 for DELTA and GAP).
template <int X, typename U>
[[gnu::always_inline]] inline void StoreImpl(const int64_t* v, const int64_t* dur, size_t n,
                                             uint64_t lo, uint8_t* out) {
  size_t i = 0;
  if constexpr (X != kPlainKind) {
    const U zero = 0;
    std::memcpy(out, &zero, sizeof(U));
    i = 1;
  }
  for (; i < n; ++i) {
    const U u = static_cast<U>(Transformed<X>(v, dur, i) - lo);
    std::memcpy(out + i * sizeof(U), &u, sizeof(U));
  }
}

// Whether p[0, n) are all equal: the differences from p[0] OR-ed as
// integers of U's width (not as bools), which vectorizes; 64 rows per
// early-exit test.
template <typename U>
[[gnu::always_inline]] inline bool AllEqualImpl(const U* p, size_t n) {
  const U v0 = p[0];
  size_t i = 1;
  for (; i + 64 <= n; i += 64) {
    U diff = 0;
    for (size_t j = 0; j < 64; ++j) diff |= static_cast<U>(p[i + j] ^ v0);
    if (diff != 0) return false;
  }
  U diff = 0;
  for (; i < n; ++i) diff |= static_cast<U>(p[i] ^ v0);
  return diff == 0;
}

// dst[i] = src[i] widened, with the PlainStats of the widened values.
template <typename T>
[[gnu::always_inline]] inline PlainStats WidenImpl(const T* src, size_t n, int64_t* dst) {
  int64_t lo = src[0], hi = src[0];
  size_t changes = 0;
  dst[0] = src[0];
  for (size_t i = 1; i < n; ++i) {
    const int64_t x = static_cast<int64_t>(src[i]);
    dst[i] = x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    changes += static_cast<size_t>(src[i] != src[i - 1]);
  }
  return {lo, hi, changes};
}

// Smallest start and largest end (ts + dur saturated at the int64 limits).
[[gnu::always_inline]] inline void EndRangeImpl(const int64_t* ts, const int64_t* dur, size_t n,
                                                int64_t* min_ts, int64_t* max_end) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t lo = kMax, hi = kMin;
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = ts[i], d = dur[i];
    int64_t end = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(d));
    const bool overflow = ((a ^ end) & (d ^ end)) < 0;  // a, d of one sign, end of the other
    end = overflow ? (d > 0 ? kMax : kMin) : end;
    lo = a < lo ? a : lo;
    hi = end > hi ? end : hi;
  }
  *min_ts = lo;
  *max_end = hi;
}

#define MOETRACE_COLUMN_PASSES                                                              \
  bool AllEqual(const uint8_t* p, size_t n) { return AllEqualImpl(p, n); }                  \
  bool AllEqual(const uint16_t* p, size_t n) { return AllEqualImpl(p, n); }                 \
  bool AllEqual(const uint32_t* p, size_t n) { return AllEqualImpl(p, n); }                 \
  bool AllEqual(const uint64_t* p, size_t n) { return AllEqualImpl(p, n); }                 \
  PlainStats Widen(const uint8_t* s, size_t n, int64_t* d) { return WidenImpl(s, n, d); }   \
  PlainStats Widen(const uint16_t* s, size_t n, int64_t* d) { return WidenImpl(s, n, d); }  \
  PlainStats Widen(const int32_t* s, size_t n, int64_t* d) { return WidenImpl(s, n, d); }   \
  PlainStats Widen(const uint32_t* s, size_t n, int64_t* d) { return WidenImpl(s, n, d); }  \
  void EndRange(const int64_t* ts, const int64_t* dur, size_t n, int64_t* lo, int64_t* hi) { \
    EndRangeImpl(ts, dur, n, lo, hi);                                                       \
  }                                                                                         \
  FrameStats Frame(int kind, bool changes, const int64_t* v, const int64_t* dur, size_t n) { \
    if (changes) {                                                                          \
      switch (kind) {                                                                       \
        case kPlainKind: return FrameImpl<kPlainKind, true>(v, dur, n);                     \
        case kDeltaKind: return FrameImpl<kDeltaKind, true>(v, dur, n);                     \
        default: return FrameImpl<kGapKind, true>(v, dur, n);                               \
      }                                                                                     \
    }                                                                                       \
    switch (kind) {                                                                         \
      case kPlainKind: return FrameImpl<kPlainKind, false>(v, dur, n);                      \
      case kDeltaKind: return FrameImpl<kDeltaKind, false>(v, dur, n);                      \
      default: return FrameImpl<kGapKind, false>(v, dur, n);                                \
    }                                                                                       \
  }                                                                                         \
  template <int X>                                                                          \
  void StoreKind(uint32_t w, const int64_t* v, const int64_t* dur, size_t n, uint64_t lo,   \
                 uint8_t* out) {                                                            \
    switch (w) {                                                                            \
      case 1: return StoreImpl<X, uint8_t>(v, dur, n, lo, out);                             \
      case 2: return StoreImpl<X, uint16_t>(v, dur, n, lo, out);                            \
      case 4: return StoreImpl<X, uint32_t>(v, dur, n, lo, out);                            \
      default: return StoreImpl<X, uint64_t>(v, dur, n, lo, out);                          \
    }                                                                                       \
  }                                                                                         \
  void Store(int kind, uint32_t w, const int64_t* v, const int64_t* dur, size_t n,          \
             uint64_t lo, uint8_t* out) {                                                   \
    switch (kind) {                                                                         \
      case kPlainKind: return StoreKind<kPlainKind>(w, v, dur, n, lo, out);                 \
      case kDeltaKind: return StoreKind<kDeltaKind>(w, v, dur, n, lo, out);                 \
      default: return StoreKind<kGapKind>(w, v, dur, n, lo, out);                           \
    }                                                                                       \
  }

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
namespace baseline {
MOETRACE_COLUMN_PASSES
}  // namespace baseline
// (GCC only: clang has no "#pragma GCC target"; it then uses the baseline.)
// AVX-512 (VL) adds 64-bit min and max instructions (vpminsq, vpmaxsq),
// which AVX2 emulates with a compare and a blend; kept to 256-bit vectors.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MOETRACE_COLUMN_X86 1
namespace avx2 {
#pragma GCC push_options
#pragma GCC target("avx2")
MOETRACE_COLUMN_PASSES
#pragma GCC pop_options
}  // namespace avx2
namespace avx512 {
#pragma GCC push_options
#pragma GCC target("avx2", "avx512f", "avx512vl", "avx512bw", "avx512dq", "prefer-vector-width=256")
MOETRACE_COLUMN_PASSES
#pragma GCC pop_options
}  // namespace avx512
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#ifdef MOETRACE_COLUMN_X86
// 2: AVX-512 (F, VL, BW, DQ), 1: AVX2, 0: the x86-64 baseline.
int SimdLevel() {
  static const int level =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
              __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
          ? 2
          : __builtin_cpu_supports("avx2") ? 1 : 0;
  const int cap = SimdLevelCap();
  return cap < 0 ? level : std::min(level, cap);
}
// Returns `call` from the best compiled variant the CPU runs.
#define MOETRACE_DISPATCH(call)                   \
  switch (SimdLevel()) {                          \
    case 2: return avx512::call;                  \
    case 1: return avx2::call;                    \
    default: return baseline::call;               \
  }
#else
#define MOETRACE_DISPATCH(call) return baseline::call;
#endif
#undef MOETRACE_COLUMN_PASSES

// `changes`: whether to count the value changes (else 0).
FrameStats Frame(int kind, bool changes, const int64_t* v, const int64_t* dur, size_t n) {
  MOETRACE_DISPATCH(Frame(kind, changes, v, dur, n))
}

// Stores u[i] in w bytes (1, 2, 4 or 8).
void Store(int kind, uint32_t w, const int64_t* v, const int64_t* dur, size_t n, uint64_t lo,
           uint8_t* out) {
  MOETRACE_DISPATCH(Store(kind, w, v, dur, n, lo, out))
}

}  // namespace

void EndRange(const int64_t* ts, const int64_t* dur, size_t n, int64_t* min_ts,
              int64_t* max_end) {
  MOETRACE_DISPATCH(EndRange(ts, dur, n, min_ts, max_end))
}

void RangeOf(const int64_t* v, size_t n, int64_t* lo, int64_t* hi) {
  const FrameStats f = Frame(kPlainKind, false, v, nullptr, n);
  *lo = f.lo;
  *hi = f.hi;
}

#define MOETRACE_TYPED(T)                                                                    \
  PlainStats Widen(const T* src, size_t n, int64_t* dst) { MOETRACE_DISPATCH(Widen(src, n, dst)) } \
  bool AllEqual(const T* p, size_t n) { MOETRACE_DISPATCH(AllEqual(p, n)) }
MOETRACE_TYPED(uint8_t)
MOETRACE_TYPED(uint16_t)
MOETRACE_TYPED(uint32_t)
#undef MOETRACE_TYPED
PlainStats Widen(const int32_t* src, size_t n, int64_t* dst) { MOETRACE_DISPATCH(Widen(src, n, dst)) }
bool AllEqual(const uint64_t* p, size_t n) { MOETRACE_DISPATCH(AllEqual(p, n)) }
#undef MOETRACE_DISPATCH

bool ColumnEncoder::Encode(const int64_t* v, size_t n, std::optional<int64_t> default_value,
                           const int64_t* dur, Column* col, const PlainStats* plain) {
  ColumnView view;
  if (!Encode(v, n, default_value, dur, &view, plain)) return false;
  col->Clear();
  col->set_encoding(view.encoding());
  col->set_constant(view.constant());
  col->set_width(view.width());
  col->set_first(view.first());
  col->set_data(view.data().data(), view.data().size());
  return true;
}

bool ColumnEncoder::Encode(const int64_t* v, size_t n, std::optional<int64_t> default_value,
                           const int64_t* dur, ColumnView* col, const PlainStats* known) {
  return Encode(v, n, default_value, dur, col, known, nullptr);
}

bool ColumnEncoder::Encode(const int64_t* v, size_t n, std::optional<int64_t> default_value,
                           const int64_t* dur, ColumnView* col, const PlainStats* known,
                           size_t* deferred) {
  if (deferred != nullptr) *deferred = 0;
  // Constant columns (the most common kind) are found by a scan that stops
  // soon after the first difference; the others get one fused pass for all
  // stats. (int64 and uint64 views of the same bits alias legally.)
  if (AllEqual(reinterpret_cast<const uint64_t*>(v), n)) {
    if (default_value && v[0] == *default_value) return false;
    *col = ColumnView();
    col->encoding_ = CONSTANT;
    col->constant_ = v[0];
    return true;
  }

  // The transform is chosen on a sample: frames of reference of the plain
  // values, of the steps between rows (DELTA) and of the gaps after the
  // previous row's end (GAP) over the first kSample rows. DELTA and GAP
  // frame the steps from row 1 on; `first` is then chosen so that row 0's
  // step is the frame's minimum (offset 0).
  // (Non-constant: n >= 2, so m >= 2.)
  const size_t m = std::min(n, kSample);
  MinMax plain, delta, gap;
  const FrameStats sample = Frame(kPlainKind, true, v, nullptr, m);
  plain.lo = sample.lo, plain.hi = sample.hi;
  FrameStats f = Frame(kDeltaKind, false, v, nullptr, m);
  delta.lo = f.lo, delta.hi = f.hi;
  if (dur != nullptr) {
    f = Frame(kGapKind, false, v, dur, m);
    gap.lo = f.lo, gap.hi = f.hi;
  }
  ColumnEncoding best = PACKED;
  uint32_t best_width = plain.width();
  if (m > 1 && delta.width() < best_width) best = DELTA, best_width = delta.width();
  if (dur != nullptr && m > 1 && gap.width() < best_width) best = GAP, best_width = gap.width();

  // RLE is tried only when the sample's runs are shorter than the sample
  // packed: wide columns with many runs (times, FLOPs) never win, and
  // this spares them counting runs and encoding varints over the whole
  // block. (With n <= kSample the sample is the block: the test is exact.)
  // A run costs at least 2 bytes: with as many runs as that, no need to
  // size them.
  size_t sample_rle = 0;
  if (2 * (sample.changes + 1) >= m * best_width) {
    sample_rle = m * best_width;
  } else {
    int64_t prev_run = 0;
    for (size_t i = 0; i < m;) {
      size_t j = i + 1;
      while (j < m && v[j] == v[i]) ++j;
      sample_rle += VarintSize(ZigZag(WrapSub(v[i], prev_run))) + VarintSize(j - i);
      prev_run = v[i];
      i = j;
    }
  }
  const bool maybe_rle = sample_rle < m * best_width;

  // The exact frame of the chosen transform over all rows, and the runs
  // when RLE may win. A PACKED frame may be known already (`known`).
  MinMax frame;
  size_t changes = 0;
  const int kind = best == PACKED ? kPlainKind : best == DELTA ? kDeltaKind : kGapKind;
  if (best == PACKED && known != nullptr) {
    frame.lo = known->lo, frame.hi = known->hi;
    changes = known->changes;
  } else {
    // The changes only matter when RLE may win.
    const FrameStats f = Frame(kind, maybe_rle, v, dur, n);
    frame.lo = f.lo, frame.hi = f.hi;
    changes = f.changes;
  }
  const uint32_t w = frame.width();
  const size_t packed_size = n * w;

  // Runs: worth encoding only when there are few of them.
  const size_t runs = changes + 1;
  const bool try_rle = maybe_rle && runs * 2 < packed_size;
  // A run costs at most 20 bytes of varints; slack for put()'s 8-byte
  // stores and for the RLE run that crosses the packed size.
  const size_t need = std::max(8 * n, try_rle ? 20 * runs : 0) + 32;
  if (capacity_ < need) {
    capacity_ = need;
    buffer_.reset(new uint8_t[capacity_]);
  }
  uint8_t* const begin = buffer_.get();
  *col = ColumnView();
  // Encode the runs, stopping once they are no shorter than packing.
  if (try_rle) {
    uint8_t* out = begin;
    uint8_t* const stop = begin + packed_size;
    int64_t prev_run = 0;
    for (size_t i = 0; i < n && out < stop;) {
      size_t j = i + 1;
      // 8 rows per test while inside the run (long runs are why RLE won).
      for (; j + 8 <= n; j += 8) {
        uint64_t diff = 0;
        for (size_t k = 0; k < 8; ++k) diff |= static_cast<uint64_t>(v[j + k] ^ v[i]);
        if (diff != 0) break;
      }
      while (j < n && v[j] == v[i]) ++j;
      out = PutVarint(out, ZigZag(WrapSub(v[i], prev_run)));
      out = PutVarint(out, j - i);
      prev_run = v[i];
      i = j;
    }
    if (out < stop) {
      col->encoding_ = RLE;
      col->data_ = std::string_view(reinterpret_cast<const char*>(begin),
                                    static_cast<size_t>(out - begin));
      return true;
    }
  }
  // The packed data is written by WriteDeferred: here into the buffer, or
  // by the caller straight into its block.
  pending_ = {v, dur, n, kind, w, static_cast<uint64_t>(frame.lo)};
  if (deferred != nullptr) {
    *deferred = packed_size;
  } else {
    WriteDeferred(begin);
  }
  col->encoding_ = best;
  col->constant_ = frame.lo;
  col->width_ = w;
  if (best != PACKED) col->first_ = WrapSub(v[0], frame.lo);
  if (deferred == nullptr) {
    col->data_ = std::string_view(reinterpret_cast<const char*>(begin), packed_size);
  }
  return true;
}

void ColumnEncoder::WriteDeferred(uint8_t* out) const {
  // u[i] = transformed value - lo, stored in w bytes.
  // (Plain locals: clang 14 cannot capture structured bindings in lambdas.)
  const int64_t* v = pending_.v;
  const int64_t* dur = pending_.dur;
  const size_t n = pending_.n;
  const int kind = pending_.kind;
  const uint32_t w = pending_.w;
  const uint64_t lo = pending_.lo;
  if (w == 1 || w == 2 || w == 4 || w == 8) {
    Store(kind, w, v, dur, n, lo, out);
  } else if (w > 0) {
    // 3, 5, 6 or 7 bytes: 8-byte stores into a buffer with 8 bytes of
    // slack, each overwriting the last one's spill.
    auto put_all = [&](auto x) {
      constexpr int X = decltype(x)::value;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t u = X != kPlainKind && i == 0 ? 0 : Transformed<X>(v, dur, i) - lo;
        std::memcpy(out + i * w, &u, 8);
      }
    };
    switch (kind) {
      case kPlainKind: put_all(std::integral_constant<int, kPlainKind>()); break;
      case kDeltaKind: put_all(std::integral_constant<int, kDeltaKind>()); break;
      default: put_all(std::integral_constant<int, kGapKind>()); break;
    }
  }
}

}  // namespace moetrace::native

// ---------------------------------------------------------------------------
// Decoding.
//
// The loops are instantiated per output type, byte width and transform so
// that each is a tight loop the compiler unrolls and vectorizes (PACKED)
// with no per-value branch; a width that is not a power of two loads 8
// bytes and masks while 8 bytes remain in the data, and loads exactly
// `width` bytes for the last few rows (never past the data).

#if defined(__GNUC__) && !defined(__clang__)
// GCC's -O2 only vectorizes loops its "very cheap" model accepts; the
// widening loops below are worth more (clang vectorizes them at -O2), with
// a scalar epilogue for the last rows (which the "very cheap" model refuses).
#pragma GCC push_options
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace moetrace::native {
namespace {

enum Transform { kPacked, kDelta, kGap };

// Pieces of at least this many bytes are decoded through an L1 chunk and
// written with non-temporal stores: a rank's columns (tens of MiB) do not
// stay in cache anyway, and streaming stores skip reading every output
// line before overwriting it (measured ~2x the store bandwidth of plain
// stores on a 48 MiB output).
constexpr size_t kStreamBytes = 16 << 10;
constexpr size_t kChunkBytes = 4 << 10;

// Off while a rank that fits in cache is decoded (StreamStores).
thread_local bool stream_stores = true;

// Loads a W-byte little-endian integer. Widths 1, 2, 4 and 8 go through
// an integer of that width, which GCC vectorizes (a widening load).
template <int W>
inline uint64_t LoadExact(const uint8_t* p) {
  if constexpr (W == 0) {
    return 0;
  } else if constexpr (W == 1) {
    return p[0];
  } else if constexpr (W == 2 || W == 4 || W == 8) {
    using T = std::conditional_t<W == 2, uint16_t, std::conditional_t<W == 4, uint32_t, uint64_t>>;
    T x;
    std::memcpy(&x, p, W);
    return x;
  } else {
    uint64_t x = 0;
    std::memcpy(&x, p, W);
    return x;
  }
}

// Loads 8 bytes (the caller guarantees they lie inside the data) and keeps W.
template <int W>
inline uint64_t LoadWide(const uint8_t* p) {
  if constexpr (W == 0 || W == 1 || W == 2 || W == 4 || W == 8) {
    return LoadExact<W>(p);
  } else {
    uint64_t x;
    std::memcpy(&x, p, 8);
    return x & ((uint64_t{1} << (8 * W)) - 1);
  }
}

// Decodes rows [0, m) of `p` (W bytes each, exactly m * W bytes readable
// from p, `avail` >= m * W bytes readable in all). Returns whether a value
// fell outside [lo, hi] (only tested when Check).
template <typename U, int W, Transform X, bool Check>
bool Loop(const uint8_t* __restrict p, size_t avail, size_t m, U* __restrict out, uint64_t base,
          int64_t* prev_io,
          const int64_t* dur, int64_t lo, int64_t hi) {
  // Rows whose 8-byte load stays inside the data.
  size_t fast = m;
  if constexpr (W != 0 && W != 1 && W != 2 && W != 4 && W != 8) {
    fast = avail >= 8 ? std::min(m, (avail - 8) / W + 1) : 0;
  }
  bool bad = false;
  int64_t prev = *prev_io;
  auto step = [&](size_t i, uint64_t u) {
    int64_t v;
    if constexpr (X == kPacked) {
      v = static_cast<int64_t>(base + u);
    } else if constexpr (X == kDelta) {
      v = prev = static_cast<int64_t>(static_cast<uint64_t>(prev) + base + u);
    } else {
      v = static_cast<int64_t>(static_cast<uint64_t>(prev) + base + u);
      prev = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(dur[i]));
    }
    if constexpr (Check) bad |= (v < lo) | (v > hi);
    out[i] = static_cast<U>(v);
  };
  size_t i = 0;
  for (; i < fast; ++i) step(i, LoadWide<W>(p + i * W));
  for (; i < m; ++i) step(i, LoadExact<W>(p + i * W));
  *prev_io = prev;
  return bad;
}

template <typename U, Transform X, bool Check>
bool LoopAnyWidth(uint32_t w, const uint8_t* p, size_t avail, size_t m, U* out, uint64_t base,
                  int64_t* prev, const int64_t* dur, int64_t lo, int64_t hi) {
  switch (w) {
    case 0: return Loop<U, 0, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 1: return Loop<U, 1, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 2: return Loop<U, 2, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 3: return Loop<U, 3, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 4: return Loop<U, 4, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 5: return Loop<U, 5, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 6: return Loop<U, 6, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    case 7: return Loop<U, 7, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
    default: return Loop<U, 8, X, Check>(p, avail, m, out, base, prev, dur, lo, hi);
  }
}

// Decodes m rows as Loop does, through L1 chunks streamed to `out`.
template <typename U, Transform X, bool Check>
bool StreamLoop(uint32_t w, const uint8_t* p, size_t avail, size_t m, U* out, uint64_t base,
                int64_t* prev, const int64_t* dur, int64_t lo, int64_t hi) {
  constexpr size_t kChunk = kChunkBytes / sizeof(U);
  alignas(64) U tmp[kChunk];
  bool bad = false;
  for (size_t at = 0; at < m; at += kChunk) {
    const size_t k = std::min(kChunk, m - at);
    bad |= LoopAnyWidth<U, X, Check>(w, p + at * w, avail - at * w, k, tmp, base, prev,
                                     dur == nullptr ? nullptr : dur + at, lo, hi);
    StreamCopy(out + at, tmp, k * sizeof(U));
  }
  return bad;
}

template <typename U, Transform X, bool Check>
bool Decode(uint32_t w, const uint8_t* p, size_t avail, size_t m, U* out, uint64_t base,
            int64_t* prev, const int64_t* dur, int64_t lo, int64_t hi) {
  // Eight rows per step where the CPU allows (a few rows: the setup costs more).
  static_assert(kPacked == 0 && kDelta == 1 && kGap == 2, "avx512_decode's transform numbers");
  if (m >= 16 && avx512_decode::Usable()) {
    const avx512_decode::Column c{p, w, base, dur, lo, hi};
    return avx512_decode::Decode(X, Check, stream_stores && m * sizeof(U) >= kStreamBytes, c, m,
                                 prev, out);
  }
  if (stream_stores && m * sizeof(U) >= kStreamBytes) {
    return StreamLoop<U, X, Check>(w, p, avail, m, out, base, prev, dur, lo, hi);
  }
  return LoopAnyWidth<U, X, Check>(w, p, avail, m, out, base, prev, dur, lo, hi);
}

}  // namespace

void StreamCopy(void* dst, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
#ifdef __SSE2__
  const size_t head = std::min(n, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  for (; n >= 16; n -= 16, d += 16, s += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  }
#endif
  std::memcpy(d, s, n);
}

void StreamFill(void* dst, uint8_t byte, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
#ifdef __SSE2__
  if (stream_stores && n >= kStreamBytes) {
    const size_t head = (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16;
    std::memset(d, byte, head);
    d += head, n -= head;
    const __m128i v = _mm_set1_epi8(static_cast<char>(byte));
    for (; n >= 64; n -= 64, d += 64) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(d), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), v);
    }
  }
#endif
  std::memset(d, byte, n);
}

StreamStores::StreamStores(bool on) : before_(stream_stores) { stream_stores = on; }
StreamStores::~StreamStores() { stream_stores = before_; }

void StreamFence() {
#ifdef __SSE2__
  _mm_sfence();
#endif
}

const char* ColumnReader::Init(const ColumnView& col, size_t n, int64_t lo, int64_t hi) {
  const std::string_view data = col.data();
  data_ = reinterpret_cast<const uint8_t*>(data.data());
  end_ = data_ + data.size();
  encoding_ = col.encoding();
  width_ = col.width();
  base_ = static_cast<uint64_t>(col.constant());
  prev_ = col.first();
  row_ = 0;
  rows_ = n;
  lo_ = lo;
  hi_ = hi;
  run_value_ = 0;
  run_left_ = 0;
  switch (encoding_) {
    case CONSTANT:
      if (!data.empty()) return "constant column with data";
      if (col.constant() < lo || col.constant() > hi) return "value out of range";
      return nullptr;
    case RLE:
      return nullptr;
    case PACKED:
    case DELTA:
    case GAP:
      break;
    default:
      return "unknown column encoding";
  }
  if (width_ > 8) return "packed width above 8 bytes";
  // n <= 2^32 rows (blocks hold at most 65536; comm vectors 2^26): no overflow.
  if (data.size() != n * width_) return "packed column data is not row count x width bytes";
  // A PACKED column whose every storable value (base + 0 .. base + the
  // largest w-byte offset) lies in [lo, hi] needs no per-value check.
  const int64_t base = col.constant();
  packed_in_range_ =
      encoding_ == PACKED &&
      ((lo == std::numeric_limits<int64_t>::min() && hi == std::numeric_limits<int64_t>::max()) ||
       (width_ < 8 && base >= lo && base <= hi &&
        static_cast<uint64_t>(hi) - static_cast<uint64_t>(base) >=
            (uint64_t{1} << (8 * width_)) - 1));
  return nullptr;
}

template <typename U>
const char* ColumnReader::NextImpl(size_t m, U* out, const int64_t* dur) {
  if (m > rows_ - row_) return "more rows asked of a column than it holds";
  const size_t at = row_;
  row_ += m;
  // Without a range narrower than int64, 8-byte outputs skip every check.
  const bool any = lo_ == std::numeric_limits<int64_t>::min() &&
                   hi_ == std::numeric_limits<int64_t>::max();
  switch (encoding_) {
    case CONSTANT:
      FillValue(out, m, static_cast<U>(base_));
      return nullptr;
    case RLE: {
      size_t done = 0;
      while (done < m) {
        if (run_left_ == 0) {
          uint64_t u, len;
          const uint8_t* p = GetVarint(data_, end_, &u);
          if (p == nullptr) return "RLE column ends inside a run value";
          p = GetVarint(p, end_, &len);
          if (p == nullptr) return "RLE column ends inside a run length";
          // Rows left in the column: this piece's and later pieces'.
          if (len == 0 || len > rows_ - at - done) {
            return "RLE run length 0 or past the block's row count";
          }
          data_ = p;
          run_value_ = WrapAdd(run_value_, static_cast<uint64_t>(UnZigZag(u)));
          if (run_value_ < lo_ || run_value_ > hi_) return "value out of range";
          run_left_ = static_cast<size_t>(len);
        }
        const size_t take = std::min(run_left_, m - done);
        FillValue(out + done, take, static_cast<U>(run_value_));
        done += take;
        run_left_ -= take;
      }
      return nullptr;
    }
    default:
      break;
  }
  const uint8_t* p = data_ + at * width_;
  const size_t avail = static_cast<size_t>(end_ - p);
  bool bad;
  if (encoding_ == PACKED) {
    if (packed_in_range_ || (sizeof(U) == 8 && any)) {
      bad = Decode<U, kPacked, false>(width_, p, avail, m, out, base_, &prev_, dur, lo_, hi_);
    } else {
      bad = Decode<U, kPacked, true>(width_, p, avail, m, out, base_, &prev_, dur, lo_, hi_);
    }
  } else if (encoding_ == DELTA) {
    if (sizeof(U) == 8 && any) {
      bad = Decode<U, kDelta, false>(width_, p, avail, m, out, base_, &prev_, dur, lo_, hi_);
    } else {
      bad = Decode<U, kDelta, true>(width_, p, avail, m, out, base_, &prev_, dur, lo_, hi_);
    }
  } else {
    if (dur == nullptr) return "GAP encoding on a column other than ts";
    if constexpr (sizeof(U) != 8) {
      return "GAP encoding on a column other than ts";
    } else if (any) {
      bad = Decode<U, kGap, false>(width_, p, avail, m, out, base_, &prev_, dur, lo_, hi_);
    } else {
      bad = Decode<U, kGap, true>(width_, p, avail, m, out, base_, &prev_, dur, lo_, hi_);
    }
  }
  return bad ? "value out of range" : nullptr;
}

const char* ColumnReader::Next(size_t m, uint64_t* out, const int64_t* dur) {
  return NextImpl(m, out, dur);
}
const char* ColumnReader::Next(size_t m, uint32_t* out) { return NextImpl(m, out, nullptr); }
const char* ColumnReader::Next(size_t m, uint16_t* out) { return NextImpl(m, out, nullptr); }
const char* ColumnReader::Next(size_t m, uint8_t* out) { return NextImpl(m, out, nullptr); }

const char* ColumnReader::Finish() const {
  if (encoding_ == RLE && (run_left_ != 0 || data_ != end_)) {
    return "RLE column data longer than its runs";
  }
  return nullptr;
}

}  // namespace moetrace::native

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
