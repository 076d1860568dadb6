// Encoding and decoding of one integer column of a block (FORMAT.md,
// "Columns"). Every column is handled as int64 values; narrower fields are
// widened by the writer and range-checked by the reader.
//
// Values are stored frame-of-reference packed: after an optional delta (or
// gap, for start times) transform, each value minus the column's minimum is
// written in the fewest whole bytes that hold the largest such offset. Fixed
// widths decode without branches, several times faster than varints, and
// zstd then squeezes out the redundancy varints would have.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "formats/native/varint.h"
#include "formats/proto/mtrace.pb.h"

namespace moetrace::native {

static_assert(std::endian::native == std::endian::little,
              "the packed column code assumes a little-endian host");

// Encodes columns; keeps its output buffer between calls (no per-block
// allocation).
class ColumnEncoder {
 public:
  // Encodes `n` values (n >= 1) into `col` with whichever of CONSTANT /
  // PACKED / DELTA / RLE (and GAP when `dur` is given: the values are start
  // times and `dur` their durations) is smallest. Returns false, leaving
  // `col` untouched, when every value equals `default_value` (if given):
  // such a column is omitted from its block. `range`, when given, is the
  // smallest and the largest value (saves a pass).
  bool Encode(const int64_t* values, size_t n, std::optional<int64_t> default_value,
              const int64_t* dur, Column* col, const int64_t* range = nullptr);

 private:
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_ = 0;
};

inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t WrapAdd(int64_t a, uint64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + b);
}

#if defined(__GNUC__) && !defined(__clang__)
// GCC's -O2 only vectorizes loops its "very cheap" model accepts; the
// widening copies and transforms of the decoder are worth more (clang
// vectorizes them at -O2 anyway).
#pragma GCC push_options
#pragma GCC optimize("tree-loop-vectorize")
#endif
// Appends n copies of `value` to `out` (reserved by the caller), writing
// each row once: zero is a memset; other values a fill loop, vectorized (see
// the pragma) instead of resize's memset followed by a second pass.
template <typename T>
inline void AppendFill(std::vector<T>& out, size_t n, T value) {
  if (value == T()) {
    out.resize(out.size() + n);
    return;
  }
  out.insert(out.end(), n, value);
}

// u[j] = the (first + j)-th `w`-byte integer of data[0, size), j < m.
// The caller checked (first + m) * w <= size. M is size_t, or
// std::integral_constant for whole chunks: a constant trip count lets the
// compiler vectorize these loops at -O2.
template <typename M>
inline void Unpack(const uint8_t* data, size_t size, size_t first, M m, uint32_t w,
                   uint64_t* u) {
  const uint8_t* p = data + first * w;
  switch (w) {
    case 0:
      for (size_t j = 0; j < m; ++j) u[j] = 0;
      return;
    case 1:
      for (size_t j = 0; j < m; ++j) u[j] = p[j];
      return;
    case 2:
      for (size_t j = 0; j < m; ++j) {
        uint16_t x;
        std::memcpy(&x, p + 2 * j, 2);
        u[j] = x;
      }
      return;
    case 4:
      for (size_t j = 0; j < m; ++j) {
        uint32_t x;
        std::memcpy(&x, p + 4 * j, 4);
        u[j] = x;
      }
      return;
    case 8:
      std::memcpy(u, p, 8 * m);
      return;
    default: {  // 3, 5, 6, 7: load 8 bytes and mask, while 8 bytes remain
      const uint64_t mask = (uint64_t{1} << (8 * w)) - 1;
      const size_t left = size - first * w;  // bytes from p on
      if (left >= m * w + (8 - w)) {
        for (size_t j = 0; j < m; ++j) {
          uint64_t x;
          std::memcpy(&x, p + w * j, 8);
          u[j] = x & mask;
        }
        return;
      }
      for (size_t j = 0; j < m; ++j) {
        uint64_t x = 0;
        std::memcpy(&x, p + w * j, w);
        u[j] = x;
      }
      return;
    }
  }
}

// Appends the `n` values of a column to `out`, each converted to T after
// checking it lies in [lo, hi]. `dur` must point at the decoded durations
// of the same rows for GAP (may be null otherwise). For 8-byte T the range
// must be the whole int64 range: no check is made. Appending (into
// reserved capacity) writes each value once; resizing first would write
// every row twice. Returns nullptr on success or a description of what is
// wrong (the data is untrusted); `out` may then hold part of the rows.
template <typename T>
const char* DecodeColumn(const Column& col, size_t n, const int64_t* dur, int64_t lo, int64_t hi,
                         std::vector<T>& out) {
  const std::string& data = col.data();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data.data());
  const int64_t base = col.constant();
  const ColumnEncoding encoding = col.encoding();
  if (encoding == CONSTANT) {
    if (!data.empty()) return "constant column with data";
    if (base < lo || base > hi) return "value out of range";
    AppendFill(out, n, static_cast<T>(base));
    return nullptr;
  }
  if (encoding == RLE) {
    const uint8_t* end = p + data.size();
    int64_t value = 0;
    size_t filled = 0;
    while (filled < n) {
      uint64_t u, len;
      p = GetVarint(p, end, &u);
      if (p == nullptr) return "RLE column ends inside a run value";
      p = GetVarint(p, end, &len);
      if (p == nullptr) return "RLE column ends inside a run length";
      if (len == 0 || len > n - filled) return "RLE run length 0 or past the block's row count";
      value = WrapAdd(value, static_cast<uint64_t>(UnZigZag(u)));
      if (value < lo || value > hi) return "value out of range";
      AppendFill(out, len, static_cast<T>(value));
      filled += len;
    }
    if (p != end) return "RLE column data longer than its runs";
    return nullptr;
  }
  if (encoding != PACKED && encoding != DELTA && encoding != GAP) {
    return "unknown column encoding";
  }
  if (encoding == GAP && dur == nullptr) return "GAP encoding on a column other than ts";
  const uint32_t w = col.width();
  if (w > 8) return "packed width above 8 bytes";
  if (data.size() != n * w) return "packed column data is not row count x width bytes";
  // Unpack a chunk into L1, transform it, append it.
  constexpr size_t kChunk = 512;
  uint64_t u[kChunk];
  T o[kChunk];
  constexpr bool kCheck = sizeof(T) < 8;  // 8-byte fields take any int64
  bool bad = false;
  const uint64_t ubase = static_cast<uint64_t>(base);
  int64_t prev = col.first();  // DELTA: previous value; GAP: previous end
  // Transforms m offsets, u(j) giving the j-th, into o[] and appends them.
  // A PACKED column whose every possible value (base + 0 .. base + the
  // largest w-byte offset) lies in [lo, hi] needs no per-value check.
  const bool packed_in_range =
      encoding == PACKED && w < 8 && base >= lo && base <= hi &&
      static_cast<uint64_t>(hi) - ubase >= (uint64_t{1} << (8 * w)) - 1;
  auto transform = [&](size_t at, auto m, auto u) {
    if (encoding == PACKED) {
      if (kCheck && !packed_in_range) {
        for (size_t j = 0; j < m; ++j) {
          int64_t v = static_cast<int64_t>(ubase + u(j));
          bad |= (v < lo) | (v > hi);
          o[j] = static_cast<T>(v);
        }
      } else {
        for (size_t j = 0; j < m; ++j) o[j] = static_cast<T>(static_cast<int64_t>(ubase + u(j)));
      }
    } else if (encoding == DELTA) {
      for (size_t j = 0; j < m; ++j) {
        prev = WrapAdd(prev, ubase + u(j));
        if constexpr (kCheck) bad |= (prev < lo) | (prev > hi);
        o[j] = static_cast<T>(prev);
      }
    } else {
      const int64_t* d = dur + at;
      for (size_t j = 0; j < m; ++j) {
        int64_t ts = WrapAdd(prev, ubase + u(j));
        if constexpr (kCheck) bad |= (ts < lo) | (ts > hi);
        o[j] = static_cast<T>(ts);
        prev = WrapAdd(ts, static_cast<uint64_t>(d[j]));
      }
    }
    out.insert(out.end(), o, o + m);
  };
  // Widths 0 and 1 (ids, small steps: the commonest) read the bytes
  // directly; wider ones go through an unpacked chunk.
  auto chunk = [&](size_t at, auto m) {
    if (w == 0) {
      transform(at, m, [](size_t) { return uint64_t{0}; });
    } else if (w == 1) {
      const uint8_t* q = p + at;
      transform(at, m, [q](size_t j) { return uint64_t{q[j]}; });
    } else {
      Unpack(p, data.size(), at, m, w, u);
      transform(at, m, [&u](size_t j) { return u[j]; });
    }
  };
  size_t at = 0;
  for (; at + kChunk <= n; at += kChunk) chunk(at, std::integral_constant<size_t, kChunk>());
  if (at < n) chunk(at, n - at);
  return bad ? "value out of range" : nullptr;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

}  // namespace moetrace::native
