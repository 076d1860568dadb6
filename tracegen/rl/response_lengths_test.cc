#include "tracegen/rl/response_lengths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace moetrace::tracegen::rl {
namespace {

RlConfig Rl(const std::string& dist, int mean, double sigma, int max) {
  RlConfig rl;
  rl.set_response_distribution(dist);
  rl.set_response_mean(mean);
  rl.set_response_sigma(sigma);
  rl.set_response_max(max);
  return rl;
}

TEST(ResponseLengths, FixedIsTheMean) {
  EXPECT_EQ(DrawResponseLengths(Rl("fixed", 300, 0.8, 1000), 1, 0, 4),
            (std::vector<int64_t>{300, 300, 300, 300}));
}

TEST(ResponseLengths, LognormalIsDeterministicCappedAndHasTheMean) {
  const RlConfig rl = Rl("lognormal", 1000, 1.0, 8000);
  auto a = DrawResponseLengths(rl, 7, 3, 20000);
  EXPECT_EQ(a, DrawResponseLengths(rl, 7, 3, 20000));
  EXPECT_NE(a, DrawResponseLengths(rl, 7, 4, 20000));  // each iteration its own draw
  EXPECT_EQ(*std::max_element(a.begin(), a.end()), 8000);  // the cap is reached
  EXPECT_GE(*std::min_element(a.begin(), a.end()), 1);
  // Uncapped mean 1000; the cap at 8x the mean removes E[(X - 8000)+] =
  // 1000 * (1 - Phi(z - sigma)) - 8000 * (1 - Phi(z)), z = (ln 8 + 1/2) / 1
  // = 2.579: 1000 * 0.0549 - 8000 * 0.00495 = 15.3, so ~985 expected.
  const double mean = std::accumulate(a.begin(), a.end(), 0.0) / a.size();
  EXPECT_NEAR(mean, 985, 25);
  // sigma 0: every draw is the mean.
  EXPECT_EQ(DrawResponseLengths(Rl("lognormal", 500, 0, 800), 1, 0, 3),
            (std::vector<int64_t>{500, 500, 500}));
}

TEST(LongTailIdle, EveryCardWaitsForTheLastInstance) {
  // Instances of 4 cards ending at 10, 30, 60: 4 * (50 + 30 + 0) = 320.
  EXPECT_EQ(LongTailIdle({10, 30, 60}, 4), 320);
  EXPECT_EQ(LongTailIdle({5, 5}, 8), 0);
  EXPECT_EQ(LongTailIdle({}, 8), 0);
}

}  // namespace
}  // namespace moetrace::tracegen::rl
