// Test helpers shared by the SIMD varint decoders' tests
// (varint_decode_avx2_test.cc, varint_decode_avx512_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/native/varint.h"

namespace moetrace::native::varint_testing {

// The decoders' common signature (varint_avx2::DecodeShort, varint_avx512::DecodeShort).
using DecodeShortFn = void (*)(const uint8_t**, const uint8_t*, int64_t**, const int64_t*);

inline std::vector<uint8_t> Encode(const std::vector<int64_t>& values) {
  std::vector<uint8_t> out(values.size() * 10);
  uint8_t* p = out.data();
  for (int64_t v : values) p = PutVarint(p, ZigZag(v));
  out.resize(static_cast<size_t>(p - out.data()));
  return out;
}

// `decode`, then the rest one value at a time (as routing_parse.cc does):
// the result must be the values, whole.
struct Result {
  std::vector<int64_t> values;
  size_t wide_values = 0;  // decoded by `decode`
};
inline Result DecodeWith(DecodeShortFn decode, const std::vector<uint8_t>& bytes, size_t count) {
  Result r;
  r.values.assign(count, -999);
  const uint8_t* p = bytes.data();
  const uint8_t* end = p + bytes.size();
  int64_t* d = r.values.data();
  decode(&p, end, &d, r.values.data() + count);
  r.wide_values = static_cast<size_t>(d - r.values.data());
  while (p < end && d < r.values.data() + count) {
    uint64_t u;
    p = GetVarint(p, end, &u);
    if (p == nullptr) break;
    *d++ = UnZigZag(u);
  }
  return r;
}

// Token counts as the 718B trace has them: 0..63 (one byte) and 64..8191
// (two), negatives among them, mixed at random.
inline std::vector<int64_t> TokenCounts(size_t n, uint64_t seed) {
  uint64_t x = seed;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  std::vector<int64_t> values(n);
  for (int64_t& v : values) {
    const uint64_t kind = next() % 100;
    v = kind < 50 ? static_cast<int64_t>(next() % 64)
        : kind < 90 ? static_cast<int64_t>(next() % 8192)
                    : -static_cast<int64_t>(next() % 4096) - 1;
  }
  return values;
}

}  // namespace moetrace::native::varint_testing
