#include "analyzer/advise/rl_predict.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "formats/errors.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace::advise {
namespace {

tracegen::RunConfig PredictConfig(const std::vector<std::string>& sets) {
  return tracegen::BuildConfig({"tiny-rl", "", sets, 0});
}

analysis::Rl Measured(const tracegen::RunConfig& c) {
  MemorySink sink;
  tracegen::Generate(c, {}, sink, {}, 2);
  MemorySource s(sink.trace());
  return Analyze(s).rl();
}

const std::vector<std::string> kPredictSeparate = {"rl.placement=separate", "rl.rollout.cards=8",
                                            "parallel.world_size=8", "parallel.dp=4", "parallel.ep=4"};

// The prediction is analyze's own figure: the plan's phase ranges through
// FillRl give exactly the rl section of the generated trace.
TEST(RlPredict, PredictRlIsTheAnalysisOfTheGeneratedTrace) {
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {}, kPredictSeparate, {"rl.staleness=1"}, {"rl.rollout.max_batch=16", "rl.rollout.ep=2"}}) {
    const tracegen::RunConfig c = PredictConfig(sets);
    const analysis::Rl predicted = PredictRl(c, 2);
    const analysis::Rl measured = Measured(c);
    EXPECT_EQ(predicted.SerializeAsString(), measured.SerializeAsString())
        << "predicted:\n" << predicted.DebugString() << "measured:\n" << measured.DebugString();
  }
}

// A change that is not a valid run is refused naming the key, so a rule
// can list it as invalid instead of predicting it.
TEST(RlPredict, WithSetsValidates) {
  const tracegen::RunConfig c = PredictConfig({});
  EXPECT_EQ(WithSets(c, {"rl.rollout.max_batch=16"}).rl().rollout().max_batch(), 16);
  try {
    WithSets(c, {"rl.rollout.dp=3"});  // an instance of 3 does not divide 16 cards
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rl.rollout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moetrace::advise
