#include "analyzer/human_number.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

TEST(HumanCount, ThreeSignificantDigitsWithAPrefix) {
  // The Quick start's tiny-moe throughput, as the issue quotes it.
  EXPECT_EQ(HumanCount(2365909), "2.37 M");
  EXPECT_EQ(HumanCount(0), "0");
  EXPECT_EQ(HumanCount(42), "42");
  EXPECT_EQ(HumanCount(987), "987");
  EXPECT_EQ(HumanCount(0.125), "0.125");
  EXPECT_EQ(HumanCount(1000), "1.00 k");
  EXPECT_EQ(HumanCount(12345), "12.3 k");
  EXPECT_EQ(HumanCount(123456), "123 k");
  // Rounding that would print "1000 k" moves to the next prefix.
  EXPECT_EQ(HumanCount(999600), "1.00 M");
  EXPECT_EQ(HumanCount(99960), "100 k");
  EXPECT_EQ(HumanCount(999.7), "1.00 k");  // not {:.3g}'s "1e+03"
  EXPECT_EQ(HumanCount(999.4), "999");
  EXPECT_EQ(HumanCount(1.46e9), "1.46 G");
  EXPECT_EQ(HumanCount(-2365909), "-2.37 M");
}

}  // namespace
}  // namespace moetrace
