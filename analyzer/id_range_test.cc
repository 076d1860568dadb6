#include "analyzer/id_range.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "formats/native/simd_level.h"

namespace moetrace {
namespace {

TEST(IdRange, EmptyLeavesTheStart) {
  IdRange r;
  AddIds(nullptr, 0, &r);
  EXPECT_EQ(r.lo_u, UINT64_MAX);
  EXPECT_EQ(r.hi, -1);
  EXPECT_EQ(r.present, 0);
}

// 19 ids (once two 8-id vector steps and a tail of three); the least id in the
// last three, the greatest in the first eight, absent (-1) ids throughout.
TEST(IdRange, LeastGreatestAndPresentOverVectorAndTail) {
  const std::vector<int64_t> ids = {40, -1, 41, 900, 42, 43, -1, 44,   //
                                    45, 46, 47, -1, 48, 49, 50, 51,    //
                                    -1, 12, 60};
  IdRange r;
  AddIds(ids.data(), ids.size(), &r);
  EXPECT_EQ(r.lo_u, 12u);
  EXPECT_EQ(r.hi, 900);
  EXPECT_EQ(r.present, 15);
}

// Folded over two threads: the second's ids only widen the first's range.
TEST(IdRange, FoldsAcrossCalls) {
  const std::vector<int64_t> a = {5, 6, 7, 8, 9, 10, 11, 12, 13};
  const std::vector<int64_t> b = {-1, -1, -1, -1, -1, -1, -1, -1, 3};
  IdRange r;
  AddIds(a.data(), a.size(), &r);
  AddIds(b.data(), b.size(), &r);
  EXPECT_EQ(r.lo_u, 3u);
  EXPECT_EQ(r.hi, 13);
  EXPECT_EQ(r.present, 10);
  // Only absent ids: no least (huge unsigned), greatest stays -1.
  IdRange none;
  AddIds(b.data(), 8, &none);
  EXPECT_EQ(none.lo_u, static_cast<uint64_t>(int64_t{-1}));
  EXPECT_EQ(none.hi, -1);
  EXPECT_EQ(none.present, 0);
}

// Long inputs take the AVX2 path where the CPU has it: the same range as
// the baseline loop (SIMD capped at level 0) at every length around the
// 8-id step, with the extremes of int64 and absent ids mixed in.
TEST(IdRange, EverySimdPathGivesTheBaselineRange) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU: only the baseline would run";
#else
  GTEST_SKIP() << "not x86-64: only the baseline would run";
#endif
  std::mt19937_64 rng(7);
  const int64_t extremes[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0, 1};
  for (size_t n : {64u, 65u, 71u, 72u, 200u, 1003u}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<int64_t> ids(n);
      for (int64_t& x : ids) {
        const uint64_t pick = rng() % 16;
        x = pick < 3 ? extremes[rng() % 5] : pick < 6 ? -static_cast<int64_t>(rng() % 1000) - 1
                                                       : static_cast<int64_t>(rng() % 100000) + 5;
      }
      IdRange start;  // also folded into a range already holding ids
      if (round % 2) start = {700, 800, 3};
      IdRange simd = start, base = start;
      native::SetSimdLevelCapForTesting(-1);
      AddIds(ids.data(), n, &simd);
      native::SetSimdLevelCapForTesting(0);
      AddIds(ids.data(), n, &base);
      native::SetSimdLevelCapForTesting(-1);
      // The baseline by hand.
      IdRange want = start;
      for (int64_t x : ids) {
        want.lo_u = std::min(want.lo_u, static_cast<uint64_t>(x));
        want.hi = std::max(want.hi, x);
        want.present += x >= 0;
      }
      EXPECT_EQ(simd.lo_u, want.lo_u) << n;
      EXPECT_EQ(simd.hi, want.hi) << n;
      EXPECT_EQ(simd.present, want.present) << n;
      EXPECT_EQ(base.lo_u, want.lo_u) << n;
      EXPECT_EQ(base.hi, want.hi) << n;
      EXPECT_EQ(base.present, want.present) << n;
    }
  }
}

}  // namespace
}  // namespace moetrace
