#include "formats/ascend/ascend_csv.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

TEST(StepTraceFigures, CompactFormHoldsEveryValueAndExpandsToTheReference) {
  CsvTable t = CsvTable::Parse(
      "Step,Computing,Communication(Not Overlapped),Free\n"
      "2,100.5,20,7.25\n"
      "3,90,N/A,10.125\n"
      ",1,2,3\n",  // no step: kNone
      "step_trace_time.csv");
  StepTraceFigures f = ReadStepTrace(t);
  EXPECT_EQ(f.keys, (std::vector<std::string>{"step_trace.step_us", "step_trace.computing_us",
                                              "step_trace.communication_not_overlapped_us",
                                              "step_trace.free_us"}));
  ASSERT_EQ(f.figures.size(), 8u);  // 3 rows x 3 value columns, one N/A
  EXPECT_EQ(f.figures[0].step, 2);
  EXPECT_EQ(f.figures[0].column, 1u);
  EXPECT_EQ(f.figures[0].value, 100.5);
  EXPECT_EQ(f.figures[3].step, 3);
  EXPECT_EQ(f.figures[3].column, 1u);
  EXPECT_EQ(f.figures[4].column, 3u);  // N/A skipped
  EXPECT_EQ(f.figures[4].value, 10.125);
  EXPECT_EQ(f.figures[5].step, kNone);
  EXPECT_EQ(f.figures[7].value, 3);
  std::vector<LabeledValue> ref = f.Reference(7);
  ASSERT_EQ(ref.size(), 8u);
  EXPECT_EQ(ref[1], (LabeledValue{7, 2, "step_trace.communication_not_overlapped_us", 20}));
  EXPECT_EQ(ref[4], (LabeledValue{7, 3, "step_trace.free_us", 10.125}));
  EXPECT_EQ(StepTraceReference(t, 7), ref);
}

}  // namespace
}  // namespace moetrace
