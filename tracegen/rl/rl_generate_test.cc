// GeneratePlan: the hand-built plan through the ordered sink path, on any
// thread count, with --ranks subsets and the RL metadata.
#include "tracegen/rl/rl_generate.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "formats/errors.h"
#include "formats/native/native_reader.h"
#include "formats/native/native_writer.h"
#include "tracegen/labels.h"
#include "tracegen/rl/rl_emit.h"
#include "tracegen/rl/rl_test_plan.h"

namespace moetrace::tracegen::rl {
namespace {

const Plan& SharedGeneratePlan() {
  static const Plan plan = testing::HandPlan();
  return plan;
}

std::string Generated(const std::vector<int32_t>& cards, int threads, GenerateSummary* s = nullptr) {
  const std::string path = ::testing::TempDir() + "rl_gen_" + std::to_string(threads) + "_" + std::to_string(::getpid()) + ".mtrace";
  {
    auto sink = CreateNativeSink(path);
    GenerateSummary got = GeneratePlan(SharedGeneratePlan(), cards, *sink, {}, threads);
    if (s) *s = got;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RlGenerate, SameBytesForAnyThreadCount) {
  GenerateSummary s;
  const std::string one = Generated({}, 1, &s);
  EXPECT_EQ(s.ranks, testing::kCards);
  EXPECT_GT(s.events, 1000);
  EXPECT_EQ(Generated({}, 2), one);
  EXPECT_EQ(Generated({}, 3), one);
}

TEST(RlGenerate, MetadataIsTheJobsAndCardsAreThePlans) {
  const std::string path = ::testing::TempDir() + "rl_gen_meta_" + std::to_string(::getpid()) + ".mtrace";
  {
    auto sink = CreateNativeSink(path);
    std::vector<int> progress;
    GeneratePlan(SharedGeneratePlan(), {1, 3}, *sink, [&](int done, int total) {
      EXPECT_EQ(total, 2);
      progress.push_back(done);
    }, 2);
    EXPECT_EQ(progress, (std::vector<int>{1, 2}));
  }
  auto src = OpenNative(path);
  const Metadata& m = src->metadata();
  EXPECT_EQ(m.source, "tracegen");
  EXPECT_EQ(m.layout.world_size, testing::kCards);
  EXPECT_EQ(m.layout.tp, 0);  // the training layout is not the world's
  // The plan's labels, its instant moved to the trace's time base, then
  // each card's step labels (GroundTruthLabels of the emitted card).
  ASSERT_GE(m.ground_truth.size(), 2u);
  EXPECT_EQ(m.ground_truth[0], (LabeledValue{-1, 0, "start_ns", double(kRlBaseTime)}));
  EXPECT_EQ(m.ground_truth[1], SharedGeneratePlan().labels[1]);
  std::vector<LabeledValue> want_rank;
  for (int c : {1, 3}) {
    Rank card;
    EmitCard(SharedGeneratePlan(), c, &card);
    for (LabeledValue& l : GroundTruthLabels(card)) want_rank.push_back(l);
  }
  EXPECT_EQ(std::vector<LabeledValue>(m.ground_truth.begin() + 2, m.ground_truth.end()), want_rank);
  // Card 1 trains: the update's steps 0-1 (iteration 0) and 2-3 (iteration
  // 1), each with its window's span, plus the sum (step -1); card 3 only
  // rolls out and scores, work of no step: no step label.
  std::vector<std::pair<int32_t, int32_t>> spans;  // (rank, step) of each span label
  for (const LabeledValue& l : want_rank)
    if (l.key == "breakdown.span_ns") spans.emplace_back(l.rank, l.step);
  EXPECT_EQ(spans, (std::vector<std::pair<int32_t, int32_t>>{{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, -1}}));
  const auto attr = std::find(m.attributes.begin(), m.attributes.end(),
                              std::pair<std::string, std::string>("rl.instance_cards", "2"));
  EXPECT_NE(attr, m.attributes.end());
  // Trained tokens per iteration: the analyzer's rl.iterations[i].trained_tokens.
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"rl.trained_tokens.0", "48"},
                                   {"rl.trained_tokens.1", "40"}})
    EXPECT_NE(std::find(m.attributes.begin(), m.attributes.end(), std::pair(key, value)), m.attributes.end()) << key;
  EXPECT_NE(m.config_json.find("tiny-moe"), std::string::npos);
  ASSERT_EQ(src->rank_count(), 2u);
  // A subset's cards are those of a full run.
  Rank want;
  EmitCard(SharedGeneratePlan(), 3, &want);
  EXPECT_TRUE(src->ReadRank(1) == want);
}

TEST(RlGenerate, CardOutsideThePlanIsAnInputErrorNamingRanks) {
  MemorySink sink;
  try {
    GeneratePlan(SharedGeneratePlan(), {0, 4}, sink, {}, 1);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--ranks"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("card 4 outside 0-3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moetrace::tracegen::rl
