// Redundant-expert copy lists from a file: well-formed ones kept, odd ones
// dropped and counted (never fatal), through the native reader too.
#include "formats/routing_copies.h"

#include <gtest/gtest.h>

#include "formats/native/native_test_util.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

using testing_formats::Stat;

// 4 experts on 2 EP ranks, expert 1 hot: 30 of its 90 tokens to a copy on EP rank 0.
RoutingRecord Good() {
  RoutingRecord r;
  r.ep_size = 2;
  r.tokens_per_expert = {10, 90, 5, 0};
  r.copy_expert = {1, 1};
  r.copy_ep_rank = {0, 1};
  r.copy_tokens = {30, 60};
  return r;
}

TEST(RoutingCopies, WellFormedListsAndEachWayToBreakThem) {
  EXPECT_TRUE(CopyListsWellFormed(Good()));
  EXPECT_TRUE(CopyListsWellFormed(RoutingRecord{}));  // no copies
  RoutingRecord unknown_ep = Good();
  unknown_ep.ep_size = 0;  // EP size not recorded: any rank >= 0
  unknown_ep.copy_ep_rank = {0, 57};
  EXPECT_TRUE(CopyListsWellFormed(unknown_ep));

  auto broken = [](auto&& edit) {
    RoutingRecord r = Good();
    edit(r);
    return CopyListsWellFormed(r);
  };
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_tokens.pop_back(); }));      // lengths differ
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_ep_rank.push_back(1); }));
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_expert = {1, 4}; }));        // no expert 4
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_expert = {-1, 1}; }));
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_ep_rank = {0, 2}; }));       // ep_size 2
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_ep_rank = {-3, 1}; }));
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_tokens = {-1, 60}; }));
  EXPECT_FALSE(broken([](RoutingRecord& r) { r.copy_tokens = {30, 61}; }));      // 91 of 90
  EXPECT_FALSE(broken([](RoutingRecord& r) {                                     // no overflow
    r.tokens_per_expert[1] = INT64_MAX;
    r.copy_tokens = {INT64_MAX, 1};
  }));
  EXPECT_TRUE(broken([](RoutingRecord& r) {
    r.tokens_per_expert[1] = INT64_MAX;
    r.copy_tokens = {INT64_MAX - 1, 1};
  }));
}

// Written as they are (the writer keeps what it is given), read back: the
// odd record loses its copies and is counted, the others are untouched.
TEST(RoutingCopies, NativeReaderCountsAndDropsOddLists) {
  Trace t;
  Rank& r = t.ranks.emplace_back();
  r.rank = 3;
  r.AddStat("read.kernel", 7);
  RoutingRecord misaligned = Good();
  misaligned.layer = 1;
  misaligned.copy_tokens = {30};
  RoutingRecord too_many = Good();
  too_many.layer = 2;
  too_many.copy_tokens = {30, 70};
  r.routing = {Good(), misaligned, too_many};
  const Trace back = testing_native::Decode(testing_native::Encode(t));
  ASSERT_EQ(back.ranks.size(), 1u);
  const Rank& b = back.ranks[0];
  ASSERT_EQ(b.routing.size(), 3u);
  EXPECT_EQ(b.routing[0], Good());
  EXPECT_TRUE(b.routing[1].copy_expert.empty());
  EXPECT_TRUE(b.routing[1].copy_ep_rank.empty());
  EXPECT_TRUE(b.routing[1].copy_tokens.empty());
  EXPECT_EQ(b.routing[1].tokens_per_expert, Good().tokens_per_expert);  // the rest kept
  EXPECT_EQ(b.routing[1].layer, 1);
  EXPECT_TRUE(b.routing[2].copy_expert.empty());
  EXPECT_EQ(Stat(b, "skipped.routing.copy_lists"), 2);
  EXPECT_EQ(Stat(b, "read.kernel"), 7);
  // A well-formed trace reads back without the stat.
  t.ranks[0].routing = {Good()};
  EXPECT_EQ(Stat(testing_native::Decode(testing_native::Encode(t)).ranks[0], "skipped.routing.copy_lists"), 0);
}

}  // namespace
}  // namespace moetrace
