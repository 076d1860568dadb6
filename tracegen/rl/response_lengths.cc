#include "tracegen/rl/response_lengths.h"

#include <algorithm>
#include <cmath>

#include "tracegen/rng.h"

namespace moetrace::tracegen::rl {

std::vector<int64_t> DrawResponseLengths(const RlConfig& rl, uint64_t seed, int iteration,
                                         int64_t count) {
  std::vector<int64_t> out(static_cast<size_t>(count), rl.response_mean());
  if (rl.response_distribution() != "lognormal") return out;
  const double sigma = rl.response_sigma();
  const double mu = std::log(double(rl.response_mean())) - sigma * sigma / 2;
  Rng rng(Key(seed, 0x524c, static_cast<uint64_t>(iteration)));  // 0x524c: "RL"
  for (auto& len : out) {
    const double x = std::exp(mu + sigma * rng.Normal());
    // Capped in floating point first: a far tail draw may not fit an int64.
    len = std::clamp<int64_t>(std::llround(std::min(x, double(rl.response_max()))), 1,
                              rl.response_max());
  }
  return out;
}

TimeNs LongTailIdle(const std::vector<TimeNs>& finish, int cards_per_instance) {
  if (finish.empty()) return 0;
  const TimeNs last = *std::max_element(finish.begin(), finish.end());
  TimeNs idle = 0;
  for (TimeNs f : finish) idle += (last - f) * cards_per_instance;
  return idle;
}

}  // namespace moetrace::tracegen::rl
