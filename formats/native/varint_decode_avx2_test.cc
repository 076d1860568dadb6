#include "formats/native/varint_decode_avx2.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/native/simd_level.h"
#include "formats/native/varint_decode_testing.h"

namespace moetrace::native::varint_avx2 {
namespace {

using varint_testing::Encode;
using varint_testing::Result;

Result Decode(const std::vector<uint8_t>& bytes, size_t count) {
  return varint_testing::DecodeWith(&DecodeShort, bytes, count);
}

TEST(VarintAvx2, OneAndTwoByteValuesAsTheScalarCode) {
  if (!Usable()) GTEST_SKIP() << "no AVX2 on this CPU";
  for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 40, 64, 65, 129, 5000}) {
    const std::vector<int64_t> values = varint_testing::TokenCounts(n, 99 + n);
    const std::vector<uint8_t> bytes = Encode(values);
    const Result r = Decode(bytes, n);
    EXPECT_EQ(r.values, values) << n << " values";
    if (n == 5000) {
      EXPECT_GT(r.wide_values, 4900u);  // all but the last 16 bytes' and 8 slots'
    }
  }
  // Extremes: 63, -64 (zigzag 127), 8191 and -8192 (zigzag 16383); all
  // one-byte, all two-byte (every step's last value crosses into the next).
  std::vector<int64_t> ones(200, -64), twos(200, 8191), mixed;
  for (int i = 0; i < 300; ++i) mixed.push_back(i % 3 == 0 ? -8192 : i % 3 == 1 ? 63 : 0);
  for (const auto* v : {&ones, &twos, &mixed}) {
    const Result r = Decode(Encode(*v), v->size());
    EXPECT_EQ(r.values, *v);
    EXPECT_GT(r.wide_values, v->size() - 16);
  }
}

TEST(VarintAvx2, StopsBeforeALongValueAtAValueStart) {
  if (!Usable()) GTEST_SKIP() << "no AVX2 on this CPU";
  // 20 one-byte values, one of three bytes (20000: zigzag 40000), 30 more:
  // steps of 8 bytes, the third holds the long value at its byte 4.
  std::vector<int64_t> values(51, 5);
  values[20] = 20000;
  const std::vector<uint8_t> bytes = Encode(values);
  std::vector<int64_t> out(51, -1);
  const uint8_t* p = bytes.data();
  int64_t* d = out.data();
  DecodeShort(&p, bytes.data() + bytes.size(), &d, out.data() + out.size());
  EXPECT_EQ(p - bytes.data(), 16);
  EXPECT_EQ(d - out.data(), 16);
  EXPECT_EQ(Decode(bytes, 51).values, values);
  // A two-byte value at a step's last byte, then a long value right after:
  // the first step emits it, the second stops, and the caller resumes past
  // its second byte (a value start), not in the middle of it.
  std::vector<int64_t> across(7, 1);
  across.push_back(1000);   // bytes 7 and 8
  across.push_back(20000);  // bytes 9..11
  across.insert(across.end(), 30, 2);
  const std::vector<uint8_t> b2 = Encode(across);
  std::vector<int64_t> o2(across.size(), -1);
  p = b2.data();
  d = o2.data();
  DecodeShort(&p, b2.data() + b2.size(), &d, o2.data() + o2.size());
  EXPECT_EQ(p - b2.data(), 9);
  EXPECT_EQ(d - o2.data(), 8);
  EXPECT_EQ(Decode(b2, across.size()).values, across);
  // Fewer than 8 slots: nothing; fewer than 16 bytes: nothing.
  std::vector<int64_t> o3(7, -1);
  p = b2.data();
  d = o3.data();
  DecodeShort(&p, b2.data() + b2.size(), &d, o3.data() + o3.size());
  EXPECT_EQ(p, b2.data());
  EXPECT_EQ(o3, std::vector<int64_t>(7, -1));
  const std::vector<uint8_t> short_run = Encode(std::vector<int64_t>(15, 3));
  std::vector<int64_t> o4(15, -1);
  p = short_run.data();
  d = o4.data();
  DecodeShort(&p, short_run.data() + short_run.size(), &d, o4.data() + o4.size());
  EXPECT_EQ(p, short_run.data());
}

TEST(VarintAvx2, CappedBelowAvx2IsNotUsable) {
  SetSimdLevelCapForTesting(0);
  EXPECT_FALSE(Usable());
  SetSimdLevelCapForTesting(-1);
}

}  // namespace
}  // namespace moetrace::native::varint_avx2
