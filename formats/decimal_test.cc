#include "formats/decimal.h"

#include <gtest/gtest.h>

#include "formats/ascend/ns_carry.h"

namespace moetrace {
namespace {

int64_t KinetoNs(std::string_view s, bool* integral = nullptr) {
  int64_t ns = 0;
  bool i = false;
  EXPECT_EQ(MicrosToNanos(s, &ns, &i), DecimalStatus::kOk) << s;
  if (integral) *integral = i;
  return ns;
}

TEST(MicrosToNanos, ExactNanoseconds) {
  bool integral = false;
  EXPECT_EQ(KinetoNs("1712195495502094.5", &integral), 1712195495502094500);
  EXPECT_FALSE(integral);
  EXPECT_EQ(KinetoNs("1669783687464181", &integral), 1669783687464181000);
  EXPECT_TRUE(integral);
  EXPECT_EQ(KinetoNs("1704161511422904.204"), 1704161511422904204);
  EXPECT_EQ(KinetoNs("63.813"), 63813);
  EXPECT_EQ(KinetoNs(" 7.0 \n"), 7000);
  EXPECT_EQ(KinetoNs("0.0004"), 0);
  EXPECT_EQ(KinetoNs("0.0005"), 1);
  EXPECT_EQ(KinetoNs("-2.5"), -2500);
  EXPECT_EQ(KinetoNs(".5"), 500);
  EXPECT_EQ(KinetoNs("1e3"), 1000000);
  EXPECT_EQ(KinetoNs("1.5E-3"), 2);
}

TEST(MicrosToNanos, Rejects) {
  int64_t ns = 0;
  bool i = false;
  EXPECT_EQ(MicrosToNanos("abc", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos("", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos("1.2.3", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos(".", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos("99999999999999999999", &ns, &i), DecimalStatus::kOutOfRange);
  EXPECT_EQ(MicrosToNanos("1e300", &ns, &i), DecimalStatus::kOutOfRange);
}

TEST(TruncatedInteger, FractionTruncated) {
  int64_t v = 0;
  EXPECT_TRUE(ParseTruncatedInteger("4294967295", &v));
  EXPECT_EQ(v, 4294967295);
  EXPECT_TRUE(ParseTruncatedInteger("-7", &v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(ParseTruncatedInteger("7.9", &v));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(ParseTruncatedInteger("stream 7", &v));
  EXPECT_FALSE(ParseTruncatedInteger("", &v));
}

int64_t Ns(std::string_view s) {
  int64_t v = -777;
  EXPECT_TRUE(ParseMicrosToNs(s, &v)) << s;
  return v;
}

TEST(ScaledDecimal, MicrosStringsAreExactToTheNanosecond) {
  // 19 significant digits: a double would lose the last ones.
  EXPECT_EQ(Ns("1704161511422904.204"), 1704161511422904204);
  EXPECT_EQ(Ns("1704161511434174.121"), 1704161511434174121);
  EXPECT_EQ(Ns("\"1736413971558972.912\t\""), 1736413971558972912);
  EXPECT_EQ(Ns(" 12 "), 12000);
  EXPECT_EQ(Ns("-1.5"), -1500);
  EXPECT_EQ(Ns("0"), 0);
}

TEST(ScaledDecimal, RoundsHalfAwayFromZeroBelowTheUnit) {
  EXPECT_EQ(Ns("1.2695"), 1270);
  EXPECT_EQ(Ns("1.2694999"), 1269);
  EXPECT_EQ(Ns("12.77012757357446"), 12770);
  EXPECT_EQ(Ns("188.14802169799805"), 188148);
  EXPECT_EQ(Ns("1.2e-05"), 0);
  EXPECT_EQ(Ns("1.5e-03"), 2);
  EXPECT_EQ(Ns("2.5E2"), 250000);
}

TEST(ScaledDecimal, RejectsTextAndOverflow) {
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

TEST(ScaledDecimal, CarryKeepsSumsExact) {
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

TEST(ParseFiniteDouble, NumbersInTextAndNothingElse) {
  double d = 0;
  EXPECT_TRUE(ParseFiniteDouble(" 1.5 ", &d));
  EXPECT_EQ(d, 1.5);
  EXPECT_TRUE(ParseFiniteDouble("\"2e3\"", &d));
  EXPECT_EQ(d, 2000);
  for (const char* bad : {"", "NaN", "nan", "inf", "-Infinity", "1.5x", "lots", "1e999"}) {
    EXPECT_FALSE(ParseFiniteDouble(bad, &d)) << bad;
  }
}

}  // namespace
}  // namespace moetrace
