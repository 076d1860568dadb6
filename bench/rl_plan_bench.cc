// BuildPlan of the RL presets (issue #16): CPU time and peak RSS of the RL
// model alone (the training engine's pass 1 dominates), and the plan's
// headline figures as counters. Run under /usr/bin/time -v for the RSS.
#include <benchmark/benchmark.h>

#include <string>

#include "tracegen/config.h"
#include "tracegen/rl/rl_plan.h"

namespace {

using moetrace::tracegen::BuildConfig;
namespace rl = moetrace::tracegen::rl;

double Label(const rl::Plan& plan, const std::string& key) {
  for (const auto& l : plan.labels)
    if (l.step == 0 && l.key == key) return l.value;
  return -1;
}

void BM_BuildPlan(benchmark::State& state, const char* preset) {
  const auto config = BuildConfig({preset, "", {}, 0});
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    rl::Plan plan = rl::BuildPlan(config, threads);
    const double t = Label(plan, "time_ns");
    state.counters["cards"] = plan.cards;
    state.counters["iteration_s"] = t / 1e9;
    state.counters["rollout_s"] = Label(plan, "phases.generate_sequences.time_ns") / 1e9;
    state.counters["update_s"] = Label(plan, "phases.update_actor.time_ns") / 1e9;
    state.counters["switch_s"] = Label(plan, "switch_ns") / 1e9;
    state.counters["long_tail_share"] =
        Label(plan, "long_tail_idle_card_ns") / (double(plan.cards) * t);
    state.counters["trained_tok_per_s"] = plan.trained_tokens[0] / (t / 1e9);
    state.counters["generated_tok_per_s"] = plan.generated_tokens[0] / (t / 1e9);
  }
}

BENCHMARK_CAPTURE(BM_BuildPlan, tiny_rl, "tiny-rl")->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildPlan, pangu_718b_rl, "pangu-ultra-moe-718b-rl")
    ->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
