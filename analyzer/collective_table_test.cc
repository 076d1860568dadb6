#include "analyzer/collective_table.h"

#include <gtest/gtest.h>

#include <map>

namespace moetrace {
namespace {

// Keys as ClusterAccumulator forms them: group id << 40 ^ sequence.
uint64_t Key(uint64_t group, uint64_t sequence) { return (group << 40) ^ sequence; }

TEST(CollectiveTable, FindsEveryKeyAgainAcrossGrowth) {
  CollectiveTable t;
  std::map<uint64_t, int32_t> expected;
  // 7 groups x 5,000 sequences: the table grows from 1,024 slots to 64 Ki.
  for (int pass = 0; pass < 3; ++pass) {
    for (uint64_t g = 0; g < 7; ++g) {
      for (uint64_t s = 0; s < 5000; ++s) {
        const uint64_t k = Key(g, s);
        CollectiveAgg* c = t.Find(k, CollectiveTable::Hash(k));
        EXPECT_EQ(c->key, k);
        c->members += 1;
        c->sum_dur += static_cast<int64_t>(s);
        expected[k] += 1;
      }
    }
  }
  EXPECT_EQ(t.size(), 35000u);
  size_t seen = 0;
  t.ForEach([&](const CollectiveAgg& c) {
    ++seen;
    ASSERT_EQ(expected.count(c.key), 1u);
    EXPECT_EQ(c.members, 3);
    EXPECT_EQ(c.sum_dur, 3 * static_cast<int64_t>(c.key & ((1ull << 40) - 1)));
  });
  EXPECT_EQ(seen, 35000u);
  // A key inserted before the growth is the same entry after it.
  const uint64_t k = Key(3, 1234);
  EXPECT_EQ(t.Find(k, CollectiveTable::Hash(k))->members, 3);
  EXPECT_EQ(t.size(), 35000u);
}

TEST(CollectiveTable, KeyZeroIsAnOrdinaryKey) {
  // Group 0, sequence 0: emptiness is members == 0, not key == 0.
  CollectiveTable t;
  CollectiveAgg* c = t.Find(0, CollectiveTable::Hash(0));
  EXPECT_EQ(c->members, 0);
  c->members = 2;
  EXPECT_EQ(t.Find(0, CollectiveTable::Hash(0))->members, 2);
  EXPECT_EQ(t.size(), 1u);
}

}  // namespace
}  // namespace moetrace
