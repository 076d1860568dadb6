#include "formats/native/column_codec.h"

#include <limits>

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

}  // namespace

bool ColumnEncoder::Encode(const int64_t* v, size_t n, std::optional<int64_t> default_value,
                           const int64_t* dur, Column* col, const int64_t* range) {
  // Constant columns (the most common kind) are found by a scan that stops
  // at the first difference; the others get one fused pass for all stats.
  const int64_t v0 = v[0];
  size_t first_change = 1;
  for (; first_change + 8 <= n; first_change += 8) {  // 8 at a time, branch-free
    uint64_t diff = 0;
    for (size_t j = 0; j < 8; ++j) diff |= static_cast<uint64_t>(v[first_change + j] ^ v0);
    if (diff != 0) break;
  }
  while (first_change < n && v[first_change] == v0) ++first_change;
  if (first_change == n) {
    if (default_value && v[0] == *default_value) return false;
    col->Clear();
    col->set_encoding(CONSTANT);
    col->set_constant(v[0]);
    return true;
  }

  // The transform is chosen on a sample: frames of reference of the plain
  // values, of the steps between rows (DELTA) and of the gaps after the
  // previous row's end (GAP) over the first kSample rows. DELTA and GAP
  // frame the steps from row 1 on; `first` is then chosen so that row 0's
  // step is the frame's minimum (offset 0).
  const size_t m = std::min(n, kSample);
  MinMax plain, delta, gap;
  plain.Add(v[0]);
  for (size_t i = 1; i < m; ++i) {
    const int64_t step = WrapSub(v[i], v[i - 1]);
    plain.Add(v[i]);
    delta.Add(step);
    if (dur != nullptr) gap.Add(WrapSub(step, dur[i - 1]));
  }
  ColumnEncoding best = PACKED;
  uint32_t best_width = plain.width();
  if (m > 1 && delta.width() < best_width) best = DELTA, best_width = delta.width();
  if (dur != nullptr && m > 1 && gap.width() < best_width) best = GAP, best_width = gap.width();

  // RLE is tried only when the sample's runs are shorter than the sample
  // packed: wide columns with many runs (times, FLOPs) never win, and
  // this spares them counting runs and encoding varints over the whole
  // block. (With n <= kSample the sample is the block: the test is exact.)
  size_t sample_rle = 0;
  {
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
  // when RLE may win. A PACKED frame may be known already (`range`).
  MinMax frame;
  size_t changes = 0;
  if (best == PACKED) {
    if (range != nullptr) {
      frame.lo = range[0], frame.hi = range[1];
      if (maybe_rle) {
        for (size_t i = 1; i < n; ++i) changes += v[i] != v[i - 1];
      }
    } else if (maybe_rle) {
      frame.Add(v[0]);
      for (size_t i = 1; i < n; ++i) {
        frame.Add(v[i]);
        changes += v[i] != v[i - 1];
      }
    } else {
      for (size_t i = 0; i < n; ++i) frame.Add(v[i]);
    }
  } else if (best == DELTA) {
    for (size_t i = 1; i < n; ++i) {
      const int64_t step = WrapSub(v[i], v[i - 1]);
      frame.Add(step);
      changes += step != 0;
    }
  } else {
    for (size_t i = 1; i < n; ++i) {
      const int64_t step = WrapSub(v[i], v[i - 1]);
      frame.Add(WrapSub(step, dur[i - 1]));
      changes += step != 0;
    }
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
  col->Clear();
  // Encode the runs, stopping once they are no shorter than packing.
  if (try_rle) {
    uint8_t* out = begin;
    uint8_t* const stop = begin + packed_size;
    int64_t prev_run = 0;
    for (size_t i = 0; i < n && out < stop;) {
      size_t j = i + 1;
      while (j < n && v[j] == v[i]) ++j;
      out = PutVarint(out, ZigZag(WrapSub(v[i], prev_run)));
      out = PutVarint(out, j - i);
      prev_run = v[i];
      i = j;
    }
    if (out < stop) {
      col->set_encoding(RLE);
      col->set_data(begin, static_cast<size_t>(out - begin));
      return true;
    }
  }
  // u[i] = transformed value - frame.lo, stored in w bytes (8-byte stores
  // into a buffer with 8 bytes of slack, each overwriting the last's spill).
  const uint64_t lo = static_cast<uint64_t>(frame.lo);
  auto put = [begin, w](size_t i, uint64_t u) { std::memcpy(begin + i * w, &u, 8); };
  // PACKED at widths 1, 2, 4 and 8 is stored through a typed pointer, so
  // that the loop vectorizes.
  auto put_packed = [&](auto zero) {
    using U = decltype(zero);
    for (size_t i = 0; i < n; ++i) {
      const U u = static_cast<U>(static_cast<uint64_t>(v[i]) - lo);
      std::memcpy(begin + i * sizeof(U), &u, sizeof(U));
    }
  };
  if (w > 0) {
    if (best == PACKED) {
      switch (w) {
        case 1: put_packed(uint8_t{}); break;
        case 2: put_packed(uint16_t{}); break;
        case 4: put_packed(uint32_t{}); break;
        case 8: put_packed(uint64_t{}); break;
        default:
          for (size_t i = 0; i < n; ++i) put(i, static_cast<uint64_t>(v[i]) - lo);
      }
    } else if (best == DELTA) {
      put(0, 0);
      for (size_t i = 1; i < n; ++i) {
        put(i, static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(v[i - 1]) - lo);
      }
    } else {
      put(0, 0);
      for (size_t i = 1; i < n; ++i) {
        put(i, static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(v[i - 1]) -
                   static_cast<uint64_t>(dur[i - 1]) - lo);
      }
    }
  }
  col->set_encoding(best);
  col->set_constant(frame.lo);
  col->set_width(w);
  if (best != PACKED) col->set_first(WrapSub(v[0], frame.lo));
  col->set_data(begin, packed_size);
  return true;
}

}  // namespace moetrace::native
