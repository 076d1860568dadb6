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
  // 7 groups x 5,000 sequences in one table (ClusterAccumulator keeps one
  // group per table, but any keys must work): group g has sequences
  // [4,000 g, 4,000 g + 5,000), so neighbouring groups share 1,000 home
  // slots. The table grows from 47 slots to 49,151.
  for (int pass = 0; pass < 3; ++pass) {
    for (uint64_t g = 0; g < 7; ++g) {
      for (uint64_t s = 4000 * g; s < 4000 * g + 5000; ++s) {
        const uint64_t k = Key(g, s);
        CollectiveAgg* c = t.Find(k);
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
  EXPECT_EQ(t.capacity(), 49151u);
  // A key inserted before the growth is the same entry after it.
  const uint64_t k = Key(3, 12345);
  EXPECT_EQ(t.Find(k)->members, 3);
  EXPECT_EQ(t.size(), 35000u);
}

TEST(CollectiveTable, KeyZeroIsAnOrdinaryKey) {
  // Group 0, sequence 0: emptiness is members == 0, not key == 0.
  CollectiveTable t;
  CollectiveAgg* c = t.Find(0);
  EXPECT_EQ(c->members, 0);
  c->members = 2;
  EXPECT_EQ(t.Find(0)->members, 2);
  EXPECT_EQ(t.size(), 1u);
}

TEST(CollectiveTable, ReserveSizesOnceForAGroup) {
  // A TP group's 1,024 collectives: one table of 1,171 slots (7/8 full),
  // not 47 -> 95 -> ... -> 1,535 through every copy.
  CollectiveTable t;
  t.Reserve(1024);
  EXPECT_EQ(t.capacity(), 1171u);
  for (uint64_t s = 0; s < 1024; ++s) t.Find((3ull << 40) ^ s)->members = 1;
  EXPECT_EQ(t.capacity(), 1171u);
  EXPECT_EQ(t.size(), 1024u);
  t.Reserve(0);
  EXPECT_EQ(t.capacity(), 1171u);
  // The other members find the same 1,024 in the full table: no growth.
  for (int member = 1; member < 8; ++member) {
    for (uint64_t s = 0; s < 1024; ++s) t.Find((3ull << 40) ^ s)->members += 1;
  }
  EXPECT_EQ(t.capacity(), 1171u);
  EXPECT_EQ(t.Find((3ull << 40) ^ 1023)->members, 8);
  // The 1,025th key doubles it (2 x 1,171 + 1).
  t.Find((3ull << 40) ^ 1024)->members = 1;
  EXPECT_EQ(t.capacity(), 2343u);
  EXPECT_EQ(t.Find((3ull << 40) ^ 17)->members, 8);
  EXPECT_EQ(t.size(), 1025u);
  // A PP pair's 256: 293 slots.
  CollectiveTable pp;
  pp.Reserve(256);
  EXPECT_EQ(pp.capacity(), 293u);
}

TEST(CollectiveTable, StridedSequencesOfAPipelinePair) {
  // A PP pair's sequences: stride 64 (2 x 32 model stages), two residues.
  // Odd capacities spread them; every one is found again, once.
  CollectiveTable t;
  for (int member = 0; member < 2; ++member) {
    for (uint64_t k = 0; k < 128; ++k) {
      for (uint64_t r : {1u, 2u}) {
        CollectiveAgg* c = t.Find((5ull << 40) ^ (64 * k + r));
        c->members += 1;
        c->sum_dur += static_cast<int64_t>(64 * k + r);
      }
    }
  }
  EXPECT_EQ(t.size(), 256u);
  int64_t sum = 0;
  size_t seen = 0;
  t.ForEach([&](const CollectiveAgg& c) {
    ++seen;
    EXPECT_EQ(c.members, 2);
    EXPECT_EQ(c.key >> 40, 5u);
    sum += c.sum_dur;
  });
  EXPECT_EQ(seen, 256u);
  // 2 x sum over k < 128 of (128 k + 3) = 2 x (128 x 8,128 + 384).
  EXPECT_EQ(sum, 2 * (128 * 8128 + 384));
}

}  // namespace
}  // namespace moetrace
