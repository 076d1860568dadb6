#include "formats/native/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

namespace moetrace::native {
namespace {

uint32_t Zlib(const uint8_t* p, size_t n) {
  return static_cast<uint32_t>(crc32(0, p, static_cast<uInt>(n)));
}

TEST(Crc32, KnownValue) {
  const char* s = "123456789";
  EXPECT_EQ(Crc32(reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);
  EXPECT_EQ(Crc32(nullptr, 0), 0u);
}

// Every length and alignment around the folded path's thresholds (64 bytes,
// multiples of 16) and some long buffers equal zlib's crc32.
TEST(Crc32, EqualsZlibForAllLengthsAndOffsets) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> buf(200'000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t off = 0; off < 16; ++off) {
    for (size_t n = 0; n <= 600; ++n) {
      ASSERT_EQ(Crc32(buf.data() + off, n), Zlib(buf.data() + off, n)) << off << " " << n;
    }
  }
  for (size_t n : {4095u, 4096u, 65537u, 199'983u}) {
    EXPECT_EQ(Crc32(buf.data() + 3, n), Zlib(buf.data() + 3, n)) << n;
  }
  std::vector<uint8_t> zeros(1000, 0), ones(1000, 0xff);
  EXPECT_EQ(Crc32(zeros.data(), zeros.size()), Zlib(zeros.data(), zeros.size()));
  EXPECT_EQ(Crc32(ones.data(), ones.size()), Zlib(ones.data(), ones.size()));
}

}  // namespace
}  // namespace moetrace::native
