#include "formats/ascend/decimal.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

int64_t Ns(std::string_view s) {
  int64_t v = -777;
  EXPECT_TRUE(ParseMicrosToNs(s, &v)) << s;
  return v;
}

TEST(Decimal, MicrosStringsAreExactToTheNanosecond) {
  // 19 significant digits: a double would lose the last ones.
  EXPECT_EQ(Ns("1704161511422904.204"), 1704161511422904204);
  EXPECT_EQ(Ns("1704161511434174.121"), 1704161511434174121);
  EXPECT_EQ(Ns("\"1736413971558972.912\t\""), 1736413971558972912);
  EXPECT_EQ(Ns(" 12 "), 12000);
  EXPECT_EQ(Ns("-1.5"), -1500);
  EXPECT_EQ(Ns("0"), 0);
}

TEST(Decimal, RoundsHalfAwayFromZeroBelowTheUnit) {
  EXPECT_EQ(Ns("1.2695"), 1270);
  EXPECT_EQ(Ns("1.2694999"), 1269);
  EXPECT_EQ(Ns("12.77012757357446"), 12770);
  EXPECT_EQ(Ns("188.14802169799805"), 188148);
  EXPECT_EQ(Ns("1.2e-05"), 0);
  EXPECT_EQ(Ns("1.5e-03"), 2);
  EXPECT_EQ(Ns("2.5E2"), 250000);
}

TEST(Decimal, RejectsTextAndOverflow) {
  int64_t v = 0;
  EXPECT_FALSE(ParseMicrosToNs("abc", &v));
  EXPECT_FALSE(ParseMicrosToNs("", &v));
  EXPECT_FALSE(ParseMicrosToNs("1.2.3", &v));
  EXPECT_FALSE(ParseMicrosToNs("12us", &v));
  EXPECT_FALSE(ParseMicrosToNs("1e", &v));
  EXPECT_FALSE(ParseMicrosToNs("99999999999999999999", &v));
  EXPECT_FALSE(ParseScaledDecimal("1704161511422904.204", 6, &v));  // ps overflow
  EXPECT_TRUE(ParseScaledDecimal("9223372036854775807", 0, &v));
  EXPECT_EQ(v, INT64_MAX);
}

TEST(Decimal, CarryKeepsSumsExact) {
  // 32 durations of x.xxx5 µs: rounding each alone adds 16 ns.
  NsCarry carry;
  int64_t sum = 0;
  for (int i = 0; i < 32; ++i) sum += carry.Round(1269500);  // 1.2695 µs in ps
  EXPECT_EQ(sum, 32 * 1269 + 16);
  NsCarry c2;
  EXPECT_EQ(c2.Round(1269500), 1270);
  EXPECT_EQ(c2.Round(1269500), 1269);
  EXPECT_EQ(c2.Round(1000), 1);
}

}  // namespace
}  // namespace moetrace
