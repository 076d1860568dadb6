#include "tracegen/generate.h"

#include <gtest/gtest.h>


#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/labels.h"

namespace moetrace::tracegen {
namespace {

double GenLabel(const Trace& t, int rank, int step, const std::string& key) {
  for (const auto& l : t.metadata.ground_truth)
    if (l.rank == rank && l.step == step && l.key == key) return l.value;
  ADD_FAILURE() << "no label " << key << " rank " << rank << " step " << step;
  return -1;
}

TEST(Generate, TinyMoeSmoke) {
  RunConfig c = BuildConfig({"tiny-moe", "", {}, 0});
  MemorySink sink;
  GenerateSummary s = Generate(c, {}, sink);
  const Trace& t = sink.trace();
  ASSERT_EQ(t.ranks.size(), 16u);
  EXPECT_GT(s.events, 1000);
  // Every rank has labels for both steps and the summed row.
  for (int r = 0; r < 16; ++r)
    for (int step : {0, 1, -1}) EXPECT_GT(GenLabel(t, r, step, "breakdown.span_ns"), 0);
  EXPECT_GT(GenLabel(t, 0, -1, "expert_imbalance.max_vio"), 0);
  EXPECT_EQ(s.ranks, 16);
}

}  // namespace
}  // namespace moetrace::tracegen

namespace moetrace::tracegen {
namespace {
TEST(Generate, RankSpec) {
  EXPECT_EQ(ParseRankSpec("0-3,7,2", 16), (std::vector<int32_t>{0, 1, 2, 3, 7}));
  EXPECT_EQ(ParseRankSpec("15", 16), (std::vector<int32_t>{15}));
  EXPECT_THROW(ParseRankSpec("16", 16), InputError);
  EXPECT_THROW(ParseRankSpec("3-1", 16), InputError);
  EXPECT_THROW(ParseRankSpec("a", 16), InputError);
  EXPECT_THROW(ParseRankSpec("1,,2", 16), InputError);
}
}  // namespace
}  // namespace moetrace::tracegen

#include <fstream>
#include <sstream>

#include "formats/native/native_writer.h"
#include "formats/formats_test_util.h"

namespace moetrace::tracegen {
namespace {
TEST(Generate, SameSeedSameBytes) {
  RunConfig c = BuildConfig({"tiny-moe", "", {}, 0});
  std::string dir = ::testing::TempDir();
  for (const char* name : {"a.mtrace", "b.mtrace"}) {
    auto sink = CreateNativeSink(dir + name);
    Generate(c, {}, *sink);
  }
  std::string a = testing_formats::FileBytes(dir + "a.mtrace"), b = testing_formats::FileBytes(dir + "b.mtrace");
  EXPECT_GT(a.size(), 10000u);
  EXPECT_TRUE(a == b);
}
}  // namespace
}  // namespace moetrace::tracegen
