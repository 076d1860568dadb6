#include "formats/native/column_codec.h"

#include <algorithm>

#include "formats/native/varint.h"

namespace moetrace::native {
namespace {

// Wrapping difference a - b, so extreme values never overflow.
inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Reads a varint with no bounds check: the caller guarantees 10 readable
// bytes. Returns nullptr for an over-long (11+ byte) varint.
inline const uint8_t* GetVarintUnchecked(const uint8_t* p, uint64_t* out) {
  uint64_t b = *p++;
  if (b < 0x80) {
    *out = b;
    return p;
  }
  uint64_t r = b & 0x7f;
  b = *p++;
  r |= (b & 0x7f) << 7;
  if (b < 0x80) {
    *out = r;
    return p;
  }
  b = *p++;
  r |= (b & 0x7f) << 14;
  if (b < 0x80) {
    *out = r;
    return p;
  }
  for (int shift = 21; shift < 70; shift += 7) {
    b = *p++;
    r |= (b & 0x7f) << shift;
    if (b < 0x80) {
      *out = r;
      return p;
    }
  }
  return nullptr;
}

// Calls sink(u) for each of `n` varints of [p, end); fails unless exactly
// `n` varints fill the data. The fast loop needs no bounds check per byte.
template <typename Sink>
inline const char* ForEachVarint(const uint8_t* p, const uint8_t* end, size_t n, Sink sink) {
  size_t i = 0;
  while (i < n && end - p >= 10) {
    uint64_t u;
    p = GetVarintUnchecked(p, &u);
    if (p == nullptr) return "varint longer than 10 bytes";
    sink(i, u);
    ++i;
  }
  for (; i < n; ++i) {
    uint64_t u;
    p = GetVarint(p, end, &u);
    if (p == nullptr) return "column data ends inside a varint or before its last value";
    sink(i, u);
  }
  if (p != end) return "column data longer than its values";
  return nullptr;
}

}  // namespace

bool EncodeColumn(const int64_t* v, size_t n, std::optional<int64_t> default_value,
                  const int64_t* dur,
                  Column* col) {
  bool constant = true;
  size_t varint_size = 0, delta_size = 0, rle_size = 0, gap_size = 0;
  int64_t prev = 0, run_value = 0, prev_run_value = 0, prev_end = 0;
  uint64_t run_len = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t x = v[i];
    constant &= x == v[0];
    varint_size += VarintSize(ZigZag(x));
    delta_size += VarintSize(ZigZag(WrapSub(x, prev)));
    prev = x;
    if (run_len > 0 && x == run_value) {
      ++run_len;
    } else {
      if (run_len > 0) {
        rle_size += VarintSize(ZigZag(WrapSub(run_value, prev_run_value))) + VarintSize(run_len);
        prev_run_value = run_value;
      }
      run_value = x;
      run_len = 1;
    }
    if (dur != nullptr) {
      gap_size += VarintSize(ZigZag(WrapSub(x, prev_end)));
      prev_end = WrapAdd(x, dur[i]);
    }
  }
  rle_size += VarintSize(ZigZag(WrapSub(run_value, prev_run_value))) + VarintSize(run_len);
  if (constant && default_value && v[0] == *default_value) return false;

  col->Clear();
  if (constant) {
    col->set_encoding(CONSTANT);
    col->set_constant(v[0]);
    return true;
  }
  ColumnEncoding best = VARINT;
  size_t best_size = varint_size;
  if (delta_size < best_size) best = DELTA, best_size = delta_size;
  if (rle_size < best_size) best = RLE, best_size = rle_size;
  if (dur != nullptr && gap_size < best_size) best = GAP, best_size = gap_size;
  col->set_encoding(best);

  std::string* data = col->mutable_data();
  data->resize(best_size);
  uint8_t* out = reinterpret_cast<uint8_t*>(data->data());
  switch (best) {
    case VARINT:
      for (size_t i = 0; i < n; ++i) out = PutVarint(out, ZigZag(v[i]));
      break;
    case DELTA:
      prev = 0;
      for (size_t i = 0; i < n; ++i) {
        out = PutVarint(out, ZigZag(WrapSub(v[i], prev)));
        prev = v[i];
      }
      break;
    case GAP:
      prev_end = 0;
      for (size_t i = 0; i < n; ++i) {
        out = PutVarint(out, ZigZag(WrapSub(v[i], prev_end)));
        prev_end = WrapAdd(v[i], dur[i]);
      }
      break;
    case RLE: {
      prev_run_value = 0;
      size_t i = 0;
      while (i < n) {
        size_t j = i + 1;
        while (j < n && v[j] == v[i]) ++j;
        out = PutVarint(out, ZigZag(WrapSub(v[i], prev_run_value)));
        out = PutVarint(out, j - i);
        prev_run_value = v[i];
        i = j;
      }
      break;
    }
    default:
      break;
  }
  return true;
}

const char* DecodeColumn(ColumnEncoding encoding, int64_t constant, const std::string& data,
                         size_t n, const int64_t* dur, int64_t* out) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* end = p + data.size();
  switch (encoding) {
    case CONSTANT:
      if (!data.empty()) return "constant column with data";
      std::fill(out, out + n, constant);
      return nullptr;
    case VARINT:
      return ForEachVarint(p, end, n, [out](size_t i, uint64_t u) { out[i] = UnZigZag(u); });
    case DELTA: {
      int64_t prev = 0;
      return ForEachVarint(p, end, n, [out, &prev](size_t i, uint64_t u) {
        prev = WrapAdd(prev, UnZigZag(u));
        out[i] = prev;
      });
    }
    case GAP: {
      if (dur == nullptr) return "GAP encoding on a column other than ts";
      int64_t prev_end = 0;
      return ForEachVarint(p, end, n, [out, dur, &prev_end](size_t i, uint64_t u) {
        int64_t ts = WrapAdd(prev_end, UnZigZag(u));
        out[i] = ts;
        prev_end = WrapAdd(ts, dur[i]);
      });
    }
    case RLE: {
      int64_t value = 0;
      size_t filled = 0;
      while (filled < n) {
        uint64_t u, len;
        p = GetVarint(p, end, &u);
        if (p == nullptr) return "RLE column ends inside a run value";
        p = GetVarint(p, end, &len);
        if (p == nullptr) return "RLE column ends inside a run length";
        if (len == 0 || len > n - filled) return "RLE run length 0 or past the block's row count";
        value = WrapAdd(value, UnZigZag(u));
        std::fill(out + filled, out + filled + len, value);
        filled += len;
      }
      if (p != end) return "RLE column data longer than its runs";
      return nullptr;
    }
    default:
      return "unknown column encoding";
  }
}

}  // namespace moetrace::native
