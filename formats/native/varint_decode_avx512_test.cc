#include "formats/native/varint_decode_avx512.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/native/varint_decode_testing.h"

namespace moetrace::native::varint_avx512 {
namespace {

using varint_testing::Encode;
using varint_testing::Result;

Result Decode(const std::vector<uint8_t>& bytes, size_t count) {
  return varint_testing::DecodeWith(&DecodeShort, bytes, count);
}

TEST(VarintAvx512, OneAndTwoByteValuesAsTheScalarCode) {
  if (!Usable()) GTEST_SKIP() << "no AVX-512 VBMI2 on this CPU";
  // Token counts as the 718B trace has them: 0..63 (one byte) and 64..8191
  // (two), negatives among them, mixed at random; every run length around
  // the 64-byte windows.
  for (size_t n : {0, 1, 40, 63, 64, 65, 100, 129, 256, 5000}) {
    const std::vector<int64_t> values = varint_testing::TokenCounts(n, 99 + n);
    const std::vector<uint8_t> bytes = Encode(values);
    const Result r = Decode(bytes, n);
    EXPECT_EQ(r.values, values) << n << " values";
    EXPECT_EQ(r.wide_values, n) << "all of them in windows, the last one short";
  }
  // Extremes of one and two bytes: 63, -64 (zigzag 127), 8191 and -8192
  // (zigzag 16383); all-one-byte and all-two-byte windows.
  std::vector<int64_t> ones(200, -64), twos(200, 8191), mixed;
  for (int i = 0; i < 300; ++i) mixed.push_back(i % 3 == 0 ? -8192 : i % 3 == 1 ? 63 : 0);
  for (const auto* v : {&ones, &twos, &mixed}) {
    const std::vector<uint8_t> bytes = Encode(*v);
    const Result r = Decode(bytes, v->size());
    EXPECT_EQ(r.values, *v);
    EXPECT_EQ(r.wide_values, v->size());
  }
}

TEST(VarintAvx512, StopsBeforeALongValue) {
  if (!Usable()) GTEST_SKIP() << "no AVX-512 VBMI2 on this CPU";
  // 100 one-byte values, one of three bytes (20000: zigzag 40000), 100 more.
  // The first window ends at the long value; the rest is left whole.
  std::vector<int64_t> values(201, 5);
  values[100] = 20000;
  const std::vector<uint8_t> bytes = Encode(values);
  ASSERT_EQ(bytes.size(), 203u);
  std::vector<int64_t> out(201, -1);
  const uint8_t* p = bytes.data();
  int64_t* d = out.data();
  DecodeShort(&p, bytes.data() + bytes.size(), &d, out.data() + out.size());
  // One window of 64 one-byte values; the next holds the long one.
  EXPECT_EQ(p - bytes.data(), 64);
  EXPECT_EQ(d - out.data(), 64);
  EXPECT_EQ(std::vector<int64_t>(out.begin(), out.begin() + 64), std::vector<int64_t>(64, 5));
  // A two-byte value across the end of a window: the window ends before it.
  std::vector<int64_t> across(63, 1);
  across.push_back(1000);  // bytes 63 and 64
  across.insert(across.end(), 100, 2);
  const std::vector<uint8_t> b2 = Encode(across);
  std::vector<int64_t> o2(across.size(), -1);
  p = b2.data();
  d = o2.data();
  DecodeShort(&p, b2.data() + b2.size(), &d, o2.data() + o2.size());
  // 63 one-byte values (the window's last byte starts the long one), then
  // 1000 and 62 twos, then the 38 bytes left in a short window.
  EXPECT_EQ(p, b2.data() + b2.size());
  EXPECT_EQ(d, o2.data() + o2.size());
  EXPECT_EQ(o2, across);
  // Fewer slots than the first window's 63 values: nothing decoded (and
  // nothing written); 63 slots: that window only.
  std::vector<int64_t> o3(62, -1);
  p = b2.data();
  d = o3.data();
  DecodeShort(&p, b2.data() + b2.size(), &d, o3.data() + o3.size());
  EXPECT_EQ(p, b2.data());
  EXPECT_EQ(o3, std::vector<int64_t>(62, -1));
  std::vector<int64_t> o4(63, -1);
  p = b2.data();
  d = o4.data();
  DecodeShort(&p, b2.data() + b2.size(), &d, o4.data() + o4.size());
  EXPECT_EQ(p - b2.data(), 63);
  EXPECT_EQ(o4, std::vector<int64_t>(63, 1));
  // A value the end cuts (a continuing last byte): left whole to the caller.
  const std::vector<uint8_t> cut = {0x02, 0x04, 0x81};
  std::vector<int64_t> o5(3, -1);
  p = cut.data();
  d = o5.data();
  DecodeShort(&p, cut.data() + cut.size(), &d, o5.data() + o5.size());
  EXPECT_EQ(p - cut.data(), 2);
  EXPECT_EQ(o5, (std::vector<int64_t>{1, 2, -1}));
}

}  // namespace
}  // namespace moetrace::native::varint_avx512
