#include "formats/json_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace moetrace {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

std::string Micros(int64_t ns) {
  std::string out;
  AppendMicros(ns, &out);
  return out;
}

std::string Double(double v) {
  std::string out;
  AppendDouble(v, &out);
  return out;
}

TEST(JsonText, MicrosAreExactWithThreeDecimals) {
  EXPECT_EQ(Micros(1700000000000001234), "1700000000000001.234");
  EXPECT_EQ(Micros(1700000000000000000), "1700000000000000.000");
  EXPECT_EQ(Micros(0), "0.000");
  EXPECT_EQ(Micros(7), "0.007");
  EXPECT_EQ(Micros(-1500), "-1.500");
  EXPECT_EQ(Micros(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
  EXPECT_EQ(Micros(std::numeric_limits<int64_t>::max()), "9223372036854775.807");
}

TEST(JsonText, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(Json("plain"), "\"plain\"");
  EXPECT_EQ(Json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Json("l1\nl2\r\t\b\f"), "\"l1\\nl2\\r\\t\\b\\f\"");
  EXPECT_EQ(Json(std::string_view("\x01\x1f\x7f\0", 4)), "\"\\u0001\\u001f\\u007f\\u0000\"");
}

TEST(JsonText, EscapesHtmlAndJavaScriptSeparators) {
  EXPECT_EQ(Json("<script>&"), "\"\\u003cscript\\u003e\\u0026\"");
  EXPECT_EQ(Json("a\xE2\x80\xA8" "b\xE2\x80\xA9"), "\"a\\u2028b\\u2029\"");
}

TEST(JsonText, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Json("\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"), "\"\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\"");
  EXPECT_EQ(Json("a\xFF" "b"), "\"a\\ufffdb\"");
  EXPECT_EQ(Json("\xC0\xAF"), "\"\\ufffd\\ufffd\"");              // overlong '/'
  EXPECT_EQ(Json("\xED\xA0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");   // surrogate
  EXPECT_EQ(Json("\xF4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // > U+10FFFF
  EXPECT_EQ(Json("\xE4\xB8"), "\"\\ufffd\\ufffd\"");              // truncated
}

TEST(JsonText, DoublesReadBackExactly) {
  EXPECT_EQ(Double(1e9), "1000000000");
  EXPECT_EQ(Double(-3), "-3");
  EXPECT_EQ(Double(0.1), "0.1");
  EXPECT_EQ(Double(2.5e5), "250000");
  EXPECT_EQ(Double(1e300), "1e+300");
  EXPECT_EQ(Double(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(Double(std::numeric_limits<double>::infinity()), "null");
}

}  // namespace
}  // namespace moetrace
