#include "formats/native/column_decode_avx512.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/native/column_codec.h"

namespace moetrace::native {
namespace {

constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();

// The values of a PACKED / DELTA / GAP column straight from the
// definitions of FORMAT.md, one row at a time.
std::vector<int64_t> Reference(ColumnEncoding e, uint32_t w, int64_t base, int64_t first,
                               const std::string& data, const std::vector<int64_t>& dur) {
  const size_t n = w == 0 ? dur.size() : data.size() / w;
  std::vector<int64_t> v(n);
  uint64_t prev = static_cast<uint64_t>(first);
  for (size_t i = 0; i < n; ++i) {
    uint64_t u = 0;
    std::memcpy(&u, data.data() + i * w, w);
    const uint64_t x = static_cast<uint64_t>(base) + u;
    if (e == PACKED) {
      v[i] = static_cast<int64_t>(x);
    } else if (e == DELTA) {
      v[i] = static_cast<int64_t>(prev += x);
    } else {
      v[i] = static_cast<int64_t>(prev + x);
      prev = static_cast<uint64_t>(v[i]) + static_cast<uint64_t>(dur[i]);
    }
  }
  return v;
}

// Decodes `col` into U at `offset` elements into a buffer (so the output
// starts at every alignment), in two pieces (the DELTA/GAP state carries
// over). Returns the error, and the values widened back to int64.
template <typename U>
const char* DecodeAt(const Column& col, size_t n, size_t offset, size_t split, int64_t lo,
                     int64_t hi, const int64_t* dur, std::vector<int64_t>* values) {
  std::vector<U> buf(n + offset);
  ColumnReader r;
  if (const char* err = r.Init(col, n, lo, hi)) return err;
  U* out = buf.data() + offset;
  const char* err = nullptr;
  if constexpr (sizeof(U) == 8) {
    err = r.Next(split, Out(out), dur);
    if (err == nullptr) {
      err = r.Next(n - split, Out(out + split), dur == nullptr ? nullptr : dur + split);
    }
  } else {
    err = r.Next(split, Out(out));
    if (err == nullptr) err = r.Next(n - split, Out(out + split));
  }
  values->clear();
  for (size_t i = 0; i < n; ++i) {
    values->push_back(static_cast<int64_t>(out[i]));
  }
  return err;
}

// Every width, transform, output type, length and output alignment: the
// AVX-512 kernels and the scalar loops both give the values the format
// defines, and agree on whether a value is out of range.
template <typename U>
void CheckOutputType(int64_t lo, int64_t hi, bool with_gap) {
  // Without AVX-512 VBMI both runs take the scalar loops.
  std::mt19937_64 rng(11);
  int out_of_range = 0, in_range = 0;
  for (ColumnEncoding e : {PACKED, DELTA, GAP}) {
    if (e == GAP && !with_gap) continue;
    for (uint32_t w = 0; w <= 8; ++w) {
      // 16385 and 70001 rows: non-temporal stores for every output type.
      for (size_t n : {size_t{16}, size_t{17}, size_t{63}, size_t{200}, size_t{5003},
                       size_t{16385}, size_t{70001}}) {
        std::string data(n * w, '\0');
        for (char& c : data) c = static_cast<char>(rng());
        // Small offsets half the time, so that narrow outputs stay in range.
        if (w > 0 && rng() % 2) {
          for (size_t i = 0; i < n; ++i) data[i * w + w - 1] = 0;
        }
        std::vector<int64_t> dur(n);
        for (int64_t& d : dur) d = static_cast<int64_t>(rng() % 100'000);
        Column col;
        col.set_encoding(e);
        col.set_width(w);
        col.set_constant(e == PACKED ? lo + static_cast<int64_t>(rng() % 4)
                                     : static_cast<int64_t>(rng() % 5) - 2);
        if (e != PACKED) col.set_first(static_cast<int64_t>(rng() % 1000));
        col.set_data(data);
        const std::vector<int64_t> want =
            Reference(e, w, col.constant(), col.first(), data, dur);
        bool want_bad = false;
        for (int64_t v : want) want_bad |= v < lo || v > hi;
        (want_bad ? out_of_range : in_range)++;
        const int64_t* d = e == GAP ? dur.data() : nullptr;
        for (size_t offset = 0; offset < 8; offset += 3) {
          // Two pieces of at least 16 rows each (the kernels' minimum),
          // or the whole column in one.
          const size_t split = n >= 32 ? 16 + (offset * 7 + n / 3) % (n - 31) : n;
          std::vector<int64_t> got;
          SetSimdLevelCapForTesting(-1);
          const char* fast = DecodeAt<U>(col, n, offset, split, lo, hi, d, &got);
          SCOPED_TRACE(testing::Message() << "encoding " << e << " width " << w << " rows " << n
                                          << " offset " << offset);
          EXPECT_EQ(fast != nullptr, want_bad) << (fast ? fast : "");
          if (!want_bad) EXPECT_EQ(got, want);
          SetSimdLevelCapForTesting(0);
          const char* slow = DecodeAt<U>(col, n, offset, split, lo, hi, d, &got);
          EXPECT_EQ(slow != nullptr, want_bad);
          if (!want_bad) EXPECT_EQ(got, want);
        }
      }
    }
  }
  SetSimdLevelCapForTesting(-1);
  // Both verdicts were exercised.
  EXPECT_GT(in_range, 10);
  if (lo != kLowest || hi != kHighest) EXPECT_GT(out_of_range, 10);
  std::printf("%d columns in range, %d out of range\n", in_range, out_of_range);
}

TEST(ColumnDecodeAvx512, Int64OutputsEqualTheDefinition) { CheckOutputType<uint64_t>(kLowest, kHighest, true); }
TEST(ColumnDecodeAvx512, CheckedInt64OutputsEqualTheDefinition) {
  CheckOutputType<uint64_t>(-1'000'000'000'000'000, 1'000'000'000'000'000, true);
}
TEST(ColumnDecodeAvx512, Int32OutputsEqualTheDefinition) {
  CheckOutputType<int32_t>(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                           false);
}
TEST(ColumnDecodeAvx512, Uint16OutputsEqualTheDefinition) {
  CheckOutputType<uint16_t>(0, 0xffff, false);
}
TEST(ColumnDecodeAvx512, Uint8OutputsEqualTheDefinition) { CheckOutputType<uint8_t>(0, 250, false); }

}  // namespace
}  // namespace moetrace::native
