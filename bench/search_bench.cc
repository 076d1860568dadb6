// The layout search's estimator (analyzer/search): layouts estimated per
// second on one core, over a fixed sample of each preset's default space
// (every 97th valid layout), caches warm as in a search.
#include <benchmark/benchmark.h>

#include <vector>

#include "analyzer/search/estimate.h"
#include "analyzer/search/space.h"
#include "tracegen/config.h"

namespace {

using namespace moetrace;

void BM_Estimate(benchmark::State& state, const char* preset, int cards) {
  tracegen::RunConfig base = tracegen::BuildConfig({preset, "", {}, 1});
  search::Space space = search::MakeSpace(base, cards, {});
  std::vector<search::Layout> sample;
  int64_t seen = 0;
  search::Enumerate(
      space, base,
      [&](const search::Layout& l) {
        if (seen++ % 97 == 0) sample.push_back(l);
      },
      [](std::string_view) {});
  search::Estimator estimator(base);
  search::Figures f;
  for (const auto& l : sample) estimator.Estimate(l, &f);  // warm the caches
  size_t i = 0;
  for (auto _ : state) {
    estimator.Estimate(sample[i++ % sample.size()], &f);
    benchmark::DoNotOptimize(f);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["layouts"] = double(sample.size());
}

BENCHMARK_CAPTURE(BM_Estimate, pangu_718b_6144, "pangu-ultra-moe-718b", 6144)
    ->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(BM_Estimate, deepseek_v3_2048, "deepseek-v3-671b", 2048)
    ->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(BM_Estimate, tiny_moe_16, "tiny-moe", 16)
    ->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
