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

#include "formats/native/block_view.h"
#include "formats/native/simd_level.h"
#include "formats/native/varint.h"
#include "formats/proto/mtrace.pb.h"

namespace moetrace::native {

static_assert(std::endian::native == std::endian::little,
              "the packed column code assumes a little-endian host");

// Frame of the plain values of a column: smallest, largest, and the number
// of rows i >= 1 with v[i] != v[i - 1].
struct PlainStats {
  int64_t lo, hi;
  size_t changes;
};

// Encodes columns; keeps its output buffer between calls (no per-block
// allocation).
class ColumnEncoder {
 public:
  // Encodes `n` values (n >= 1) into `col` with whichever of CONSTANT /
  // PACKED / DELTA / RLE (and GAP when `dur` is given: the values are start
  // times and `dur` their durations) is smallest. Returns false, leaving
  // `col` untouched, when every value equals `default_value` (if given):
  // such a column is omitted from its block. `plain`, when given, is the
  // PlainStats of the values (saves a pass).
  bool Encode(const int64_t* values, size_t n, std::optional<int64_t> default_value,
              const int64_t* dur, Column* col, const PlainStats* plain = nullptr);
  // The same into a view (field left 0) whose data points into this
  // encoder's buffer, valid until the next call: the writer serializes it
  // straight into the block (one copy of the data instead of two).
  bool Encode(const int64_t* values, size_t n, std::optional<int64_t> default_value,
              const int64_t* dur, ColumnView* col, const PlainStats* plain = nullptr);
  // The same, except that the data of a PACKED / DELTA / GAP column is not
  // written: `*deferred` is set to its size (else to 0, and `col` holds
  // the data) and WriteDeferred writes it, until the next call, while
  // `values` and `dur` are still alive. Lets the writer store the column
  // straight into its block, read the values once and copy nothing.
  bool Encode(const int64_t* values, size_t n, std::optional<int64_t> default_value,
              const int64_t* dur, ColumnView* col, const PlainStats* plain, size_t* deferred);
  // Writes the deferred data into out[0, *deferred + 8) (8 bytes of slack
  // for whole-word stores; what lands past *deferred is garbage).
  void WriteDeferred(uint8_t* out) const;

 private:
  struct Pending {
    const int64_t* v;
    const int64_t* dur;
    size_t n;
    int kind;
    uint32_t w;
    uint64_t lo;
  };
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_ = 0;
  Pending pending_ = {};
};

// Smallest and largest of v[0, n), n >= 1 (vectorized).
void RangeOf(const int64_t* v, size_t n, int64_t* lo, int64_t* hi);
// True when p[0, n) (n >= 1) are all equal (vectorized; stops within
// 64 rows of the first difference).
bool AllEqual(const uint8_t* p, size_t n);
bool AllEqual(const uint16_t* p, size_t n);
bool AllEqual(const uint32_t* p, size_t n);
bool AllEqual(const uint64_t* p, size_t n);
// Widens src[0, n) (n >= 1) into dst as int64 and returns their PlainStats,
// in one vectorized pass (the narrow columns of a block are read once).
PlainStats Widen(const uint8_t* src, size_t n, int64_t* dst);
PlainStats Widen(const uint16_t* src, size_t n, int64_t* dst);
PlainStats Widen(const int32_t* src, size_t n, int64_t* dst);
PlainStats Widen(const uint32_t* src, size_t n, int64_t* dst);
// Smallest ts[i] and largest ts[i] + dur[i] (saturated at the int64
// limits) over i < n, n >= 1 (vectorized).
void EndRange(const int64_t* ts, const int64_t* dur, size_t n, int64_t* min_ts, int64_t* max_end);

inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t WrapAdd(int64_t a, uint64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + b);
}

// Decodes one column row by row in order, in as many pieces as the caller
// likes (the native reader decodes a block's column in one piece). Writes
// each value once into
// caller-owned memory: no allocation, no intermediate buffer. The data is
// untrusted: every problem is reported as a description (never UB): sizes
// are checked by Init, values against [lo, hi] as they are decoded.
//
// Output types are the storage of the model's fields: uint64_t (int64 /
// uint64 fields, any value), uint32_t (int32 and uint32 fields, checked),
// uint16_t and uint8_t (flags, enums, checked). Signed and unsigned views of
// the same storage alias legally, so callers pass e.g. int32_t* as
// uint32_t* through the Out() helpers below.
class ColumnReader {
 public:
  // Prepares to decode the `n` rows of `col`, each within [lo, hi] (as
  // int64). Returns nullptr or what is wrong with the column's header.
  // `col` must outlive the reader's use.
  const char* Init(const ColumnView& col, size_t n, int64_t lo, int64_t hi);
  const char* Init(const Column& col, size_t n, int64_t lo, int64_t hi) {
    return Init(ViewOf(col), n, lo, hi);
  }
  // Decodes the next `m` rows into out[0, m). `dur` (GAP only) points at
  // the decoded durations of the same m rows. Returns nullptr or what is
  // wrong; then `out` holds garbage and the reader must not be used again.
  const char* Next(size_t m, uint64_t* out, const int64_t* dur = nullptr);
  const char* Next(size_t m, uint32_t* out);
  const char* Next(size_t m, uint16_t* out);
  const char* Next(size_t m, uint8_t* out);
  // After the last Next: checks that the data held nothing more (RLE).
  const char* Finish() const;

 private:
  // The whole work of Next, for every output type.
  template <typename U>
  const char* NextImpl(size_t m, U* out, const int64_t* dur);

  const uint8_t* data_ = nullptr;  // the column's bytes
  const uint8_t* end_ = nullptr;
  ColumnEncoding encoding_ = CONSTANT;
  uint32_t width_ = 0;
  uint64_t base_ = 0;        // `constant`
  int64_t prev_ = 0;         // DELTA: previous value; GAP: previous end
  size_t row_ = 0;           // rows decoded so far
  size_t rows_ = 0;          // rows of the column
  int64_t lo_ = 0, hi_ = 0;
  bool packed_in_range_ = false;  // PACKED: every storable value is in range
  // RLE: the current run.
  int64_t run_value_ = 0;
  size_t run_left_ = 0;
};

// Output written by ColumnReader: copies and fills of 16 KiB and more use
// non-temporal stores (x86), so a rank's tens of MiB of columns do not
// cost a read of every line they overwrite. Call StreamFence() before
// another thread may read what was written (ReadRankInto does at its end).
void StreamCopy(void* dst, const void* src, size_t n);
void StreamFill(void* dst, uint8_t byte, size_t n);
void StreamFence();

// While an object of this class lives, ColumnReader and StreamFill on this
// thread use non-temporal stores only if `on` (by default they do). The
// reader turns them off for a rank small enough to stay in cache: its
// caller reads the columns right after (`analyze`), and non-temporal stores
// had sent them to memory first, so that every first read of a column
// missed (pangu8's ~2.5 MB ranks: `analyze` ~5% less CPU without them).
class StreamStores {
 public:
  explicit StreamStores(bool on);
  ~StreamStores();
  StreamStores(const StreamStores&) = delete;
  StreamStores& operator=(const StreamStores&) = delete;

 private:
  bool before_;
};

// Fills out[0, n) with `value` (a byte fill when all its bytes are equal).
template <typename U>
inline void FillValue(U* out, size_t n, U value) {
  uint8_t b = static_cast<uint8_t>(value);
  U same;
  std::memset(&same, b, sizeof same);
  if (same == value) {
    StreamFill(out, b, n * sizeof(U));
  } else {
    std::fill(out, out + n, value);
  }
}

// The storage type ColumnReader writes for a model field type T.
template <typename T>
using ColumnStorage = std::conditional_t<
    sizeof(T) == 8, uint64_t,
    std::conditional_t<sizeof(T) == 4, uint32_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>;
// T* as its storage type: integers of the same width (signed/unsigned
// variants alias legally) or uint8_t for one-byte enums (a character type).
template <typename T>
inline ColumnStorage<T>* Out(T* p) {
  static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
  return reinterpret_cast<ColumnStorage<T>*>(p);
}

// Appends the `n` values of a column to `out`, each converted to T after
// checking it lies in [lo, hi] (for tests and cold paths). Returns nullptr
// on success or a description of what is wrong.
template <typename T>
const char* DecodeColumn(const Column& col, size_t n, const int64_t* dur, int64_t lo, int64_t hi,
                         std::vector<T>& out) {
  ColumnReader r;
  if (const char* err = r.Init(col, n, lo, hi)) return err;
  const size_t start = out.size();
  out.resize(start + n);
  const char* err;
  if constexpr (sizeof(T) == 8) {
    err = r.Next(n, Out(out.data() + start), dur);
  } else {
    err = r.Next(n, Out(out.data() + start));
  }
  return err != nullptr ? err : r.Finish();
}

}  // namespace moetrace::native
