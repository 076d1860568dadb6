#include "formats/perfetto/rank_packets.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "formats/sample_trace.h"

namespace moetrace {
namespace {

// A drain that fails (a full disk under AddRank) leaves nothing held: the
// next rank written is exactly what a fresh writer gives, with no bytes or
// thread holes of the failed one before it.
TEST(RankPackets, FailedDrainLeavesNothingForTheNextRank) {
  const Trace t = MakeSampleTrace(2, 6000, 3);
  RankPackets fresh;
  fresh.Write(t.ranks[1], 2, nullptr);
  ASSERT_GT(fresh.bytes().size(), size_t{1} << 20);  // the rank passes the ~1 MB drain

  RankPackets p;
  int drains = 0;
  const RankPackets::Drain fail = [&drains](RankPackets&) {
    ++drains;
    throw std::runtime_error("disk full");
  };
  EXPECT_THROW(p.Write(t.ranks[0], 1, &fail), std::runtime_error);
  EXPECT_EQ(drains, 1);
  EXPECT_TRUE(p.bytes().empty());
  EXPECT_TRUE(p.holes().empty());

  p.Write(t.ranks[1], 2, nullptr);  // no drain: the whole rank held
  EXPECT_EQ(p.bytes(), fresh.bytes());
  ASSERT_EQ(p.holes().size(), fresh.holes().size());
  for (size_t k = 0; k < p.holes().size(); ++k) {
    EXPECT_EQ(p.holes()[k].at, fresh.holes()[k].at);
    EXPECT_EQ(p.holes()[k].uuid, fresh.holes()[k].uuid);
  }
}

}  // namespace
}  // namespace moetrace
