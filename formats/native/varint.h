// LEB128 varints and zigzag, the integer coding of every column.
// Arithmetic on values is done in uint64 so that deltas of extreme values
// (INT64_MIN .. INT64_MAX) wrap instead of overflowing (no UB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace moetrace::native {

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

// Bytes of the varint of `u` (1..10).
inline size_t VarintSize(uint64_t u) {
  // 1 + floor(bits / 7), computed without division for speed.
  int bits = 64 - __builtin_clzll(u | 1);
  return static_cast<size_t>((bits * 9 + 64) / 64);
}

// Writes the varint of `u` at `p` (room for 10 bytes); returns the end.
inline uint8_t* PutVarint(uint8_t* p, uint64_t u) {
  while (u >= 0x80) {
    *p++ = static_cast<uint8_t>(u | 0x80);
    u >>= 7;
  }
  *p++ = static_cast<uint8_t>(u);
  return p;
}

// Reads a varint from [p, end). Returns nullptr when it runs past `end` or
// is longer than 10 bytes.
inline const uint8_t* GetVarint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  uint64_t result = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    uint64_t b = *p++;
    result |= (b & 0x7f) << shift;
    if (b < 0x80) {
      *out = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace moetrace::native
