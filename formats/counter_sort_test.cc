#include "formats/counter_sort.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

TEST(CounterSort, TimeOrderKeepingTheOrderOfEqualTimes) {
  Track t;
  t.sample_ts = {30, 10, 20, 10, 30};
  t.sample_value = {1, 2, 3, 4, 5};
  SortSamplesByTime(t);
  EXPECT_EQ(t.sample_ts, (std::vector<TimeNs>{10, 10, 20, 30, 30}));
  EXPECT_EQ(t.sample_value, (std::vector<double>{2, 4, 3, 1, 5}));
  SortSamplesByTime(t);  // sorted: unchanged
  EXPECT_EQ(t.sample_value, (std::vector<double>{2, 4, 3, 1, 5}));
}

}  // namespace
}  // namespace moetrace
