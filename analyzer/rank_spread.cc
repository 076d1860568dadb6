#include "analyzer/rank_spread.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace moetrace {

double FillMinMedianMax(std::vector<double> v, analysis::StepTime* out) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  out->set_min(std::llround(v.front()));
  out->set_median(std::llround(median));
  out->set_max(std::llround(v.back()));
  return median;
}

void FlagSlowRanks(const std::vector<std::string>& metrics, const std::vector<RankValues>& ranks,
                   google::protobuf::RepeatedPtrField<analysis::SlowRank>* out) {
  struct Flag { int32_t rank; size_t metric; double value, mean, dev; };
  std::vector<Flag> flags;
  if (ranks.size() >= 2) {
    for (size_t k = 0; k < metrics.size(); ++k) {
      double mean = 0;
      size_t present = 0;
      for (const RankValues& r : ranks) {
        if (std::isnan(r.values[k])) continue;
        mean += r.values[k];
        ++present;
      }
      if (present < 2) continue;
      mean /= static_cast<double>(present);
      if (mean <= 0) continue;
      for (const RankValues& r : ranks) {
        if (std::isnan(r.values[k])) continue;
        const double dev = (r.values[k] - mean) / mean;
        if (std::abs(dev) > 0.05) flags.push_back({r.rank, k, r.values[k], mean, dev});
      }
    }
  }
  std::sort(flags.begin(), flags.end(), [&](const Flag& a, const Flag& b) {
    if (std::abs(a.dev) != std::abs(b.dev)) return std::abs(a.dev) > std::abs(b.dev);
    if (a.rank != b.rank) return a.rank < b.rank;
    return std::string_view(metrics[a.metric]) < metrics[b.metric];
  });
  if (flags.size() > 100) flags.resize(100);
  for (const Flag& f : flags) {
    analysis::SlowRank* s = out->Add();
    s->set_rank(f.rank);
    s->set_metric(metrics[f.metric]);
    s->set_value(f.value);
    s->set_mean(f.mean);
    s->set_deviation(f.dev);
  }
}

}  // namespace moetrace
