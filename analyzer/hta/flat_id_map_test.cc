#include "analyzer/hta/flat_id_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace moetrace::hta {
namespace {

TEST(FlatIdMap, IdsInInsertionOrderLikeAMap) {
  std::mt19937_64 rng(3);
  FlatIdMap m;
  std::unordered_map<int64_t, uint32_t> ref;
  for (int k = 0; k < 100000; ++k) {
    // Small and huge keys, negatives (-1 is a real key), many repeats.
    int64_t key = k % 3 == 0 ? int64_t(rng() % 500) - 250 : int64_t(rng());
    bool added = false;
    uint32_t id = m.Insert(key, &added);
    auto [it, fresh] = ref.emplace(key, uint32_t(ref.size()));
    ASSERT_EQ(added, fresh);
    ASSERT_EQ(id, it->second);
  }
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [key, id] : ref) ASSERT_EQ(m.Find(key), id);
  EXPECT_EQ(m.Find(int64_t(1) << 62), ref.count(int64_t(1) << 62) ? ref[int64_t(1) << 62]
                                                                   : FlatIdMap::kNone);
  EXPECT_EQ(FlatIdMap().Find(-1), FlatIdMap::kNone);
}

TEST(Buckets, KeepsTheOrderWithinEachBucket) {
  const std::vector<uint32_t> items = {10, 11, 12, 13, 14, 15};
  const std::vector<uint32_t> ids = {2, 0, 2, 1, 0, 2};
  Buckets b = Buckets::Build(items, ids, 4);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b.begin, (std::vector<uint32_t>{0, 2, 3, 6, 6}));
  EXPECT_EQ(b.rows, (std::vector<uint32_t>{11, 14, 13, 10, 12, 15}));
}

}  // namespace
}  // namespace moetrace::hta
