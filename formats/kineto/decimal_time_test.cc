#include "formats/kineto/decimal_time.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

int64_t Ns(std::string_view s, bool* integral = nullptr) {
  int64_t ns = 0;
  bool i = false;
  EXPECT_EQ(MicrosToNanos(s, &ns, &i), DecimalStatus::kOk) << s;
  if (integral) *integral = i;
  return ns;
}

TEST(DecimalTime, ExactNanoseconds) {
  bool integral = false;
  EXPECT_EQ(Ns("1712195495502094.5", &integral), 1712195495502094500);
  EXPECT_FALSE(integral);
  EXPECT_EQ(Ns("1669783687464181", &integral), 1669783687464181000);
  EXPECT_TRUE(integral);
  EXPECT_EQ(Ns("1704161511422904.204"), 1704161511422904204);
  EXPECT_EQ(Ns("63.813"), 63813);
  EXPECT_EQ(Ns(" 7.0 \n"), 7000);
  EXPECT_EQ(Ns("0.0004"), 0);
  EXPECT_EQ(Ns("0.0005"), 1);
  EXPECT_EQ(Ns("-2.5"), -2500);
  EXPECT_EQ(Ns(".5"), 500);
  EXPECT_EQ(Ns("1e3"), 1000000);
  EXPECT_EQ(Ns("1.5E-3"), 2);
}

TEST(DecimalTime, Rejects) {
  int64_t ns = 0;
  bool i = false;
  EXPECT_EQ(MicrosToNanos("abc", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos("", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos("1.2.3", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos(".", &ns, &i), DecimalStatus::kNotANumber);
  EXPECT_EQ(MicrosToNanos("99999999999999999999", &ns, &i), DecimalStatus::kOutOfRange);
  EXPECT_EQ(MicrosToNanos("1e300", &ns, &i), DecimalStatus::kOutOfRange);
}

TEST(DecimalTime, Integers) {
  int64_t v = 0;
  EXPECT_TRUE(ParseIntegerText("4294967295", &v));
  EXPECT_EQ(v, 4294967295);
  EXPECT_TRUE(ParseIntegerText("-7", &v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(ParseIntegerText("7.9", &v));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(ParseIntegerText("stream 7", &v));
  EXPECT_FALSE(ParseIntegerText("", &v));
}

}  // namespace
}  // namespace moetrace
