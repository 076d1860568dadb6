#include "analyzer/id_range.h"

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace moetrace
