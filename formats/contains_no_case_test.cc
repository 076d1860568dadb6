#include "formats/contains_no_case.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

TEST(ContainsNoCase, AsciiCaseIgnoredOnBothSides) {
  EXPECT_TRUE(ContainsNoCase("HcclAllReduce", "hccl"));
  EXPECT_TRUE(ContainsNoCase("aclnnMemcpy", "MEMCPY"));
  EXPECT_TRUE(ContainsNoCase("x", ""));
  EXPECT_TRUE(ContainsNoCase("Notify_Wait", "wait"));  // at the end
  EXPECT_FALSE(ContainsNoCase("memcp", "memcpy"));     // longer than the text
  EXPECT_FALSE(ContainsNoCase("mmemcpx", "memcpy"));   // a first-letter match that fails
}

}  // namespace
}  // namespace moetrace
