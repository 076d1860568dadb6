// The layout search's estimator (analyzer/search): layouts estimated per
// second on one core. Each iteration estimates every valid layout of a
// slice of a preset's default space with a fresh Estimator, as a search
// does: the per-layer probes are computed once per (TP, PP, DP, EP,
// TP-extend-EP, MBS, all-to-all, recompute, swap) and shared by the VPP and
// schedule variants; the per-stage probes and the schedule pass run for
// every layout.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "analyzer/search/estimate.h"
#include "analyzer/search/space.h"
#include "tracegen/config.h"

namespace {

using namespace moetrace;

void BM_EstimateSpace(benchmark::State& state, const char* preset, int cards,
                      std::vector<std::string> space_args) {
  tracegen::RunConfig base = tracegen::BuildConfig({preset, "", {}, 1});
  search::Space space = search::MakeSpace(base, cards, space_args);
  std::vector<search::Layout> layouts;
  search::Enumerate(space, base, [&](const search::Layout& l) { layouts.push_back(l); },
                    [](std::string_view) {});
  int64_t done = 0;
  for (auto _ : state) {
    search::Estimator estimator(base);
    search::Figures f;
    for (const auto& l : layouts) {
      estimator.Estimate(l, &f);
      benchmark::DoNotOptimize(f);
    }
    done += int64_t(layouts.size());
  }
  state.SetItemsProcessed(done);
  state.counters["layouts"] = double(layouts.size());
}

// 718B on 6,144 cards, the published TP and PP (every VPP, EP, MBS,
// schedule, all-to-all, recompute, swap).
BENCHMARK_CAPTURE(BM_EstimateSpace, pangu_718b_6144_tp8_pp16, "pangu-ultra-moe-718b", 6144,
                  {"parallel.tp=8", "parallel.pp=16"})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
// 718B, TP 4 and PP 8 (DP 192: more EP choices).
BENCHMARK_CAPTURE(BM_EstimateSpace, pangu_718b_6144_tp4_pp8, "pangu-ultra-moe-718b", 6144,
                  {"parallel.tp=4", "parallel.pp=8"})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
// DeepSeek-V3 on 2,048 cards, TP 1 and PP 16.
BENCHMARK_CAPTURE(BM_EstimateSpace, deepseek_v3_2048_tp1_pp16, "deepseek-v3-671b", 2048,
                  {"parallel.tp=1", "parallel.pp=16"})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
// tiny-moe on 16 cards, the whole default space.
BENCHMARK_CAPTURE(BM_EstimateSpace, tiny_moe_16_all, "tiny-moe", 16, {})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
