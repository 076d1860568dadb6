// Generation throughput: events emitted per second (simulation of every
// rank + emission of every rank), and the cost of pass 1 alone.
#include <benchmark/benchmark.h>

#include "formats/trace_io.h"
#include "tracegen/config.h"
#include "tracegen/engine.h"
#include "tracegen/generate.h"
#include "tracegen/rl/rl_emit.h"
#include "tracegen/rl/rl_test_plan.h"

namespace {

using moetrace::tracegen::BuildConfig;

class CountingSink : public moetrace::TraceSink {
 public:
  void AddRank(const moetrace::Rank& r) override { events += int64_t(r.EventCount()); }
  void Finish(const moetrace::Metadata&) override {}
  int64_t events = 0;
};

void BM_GenerateTinyMoe(benchmark::State& state) {
  auto config = BuildConfig({"tiny-moe", "", {"steps=" + std::to_string(state.range(0))}, 0});
  int64_t events = 0;
  for (auto _ : state) {
    CountingSink sink;
    moetrace::tracegen::Generate(config, {}, sink, {}, 1);  // per core
    events += sink.events;
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_GenerateTinyMoe)->Arg(2)->Arg(8)->Unit(benchmark::kMillisecond);

// A mid-size run: 128 ranks (PP 4 x DP 32, EP 8), 16 micro-batches, on
// range(0) threads (1: events per CPU second; more: wall time).
void BM_GenerateMidMoe(benchmark::State& state) {
  auto config = BuildConfig({"tiny-moe", "",
                             {"parallel.pp=4", "parallel.dp=32", "parallel.world_size=128",
                              "model.num_layers=8", "parallel.global_batch_size=512", "steps=1"},
                             0});
  int64_t events = 0;
  for (auto _ : state) {
    CountingSink sink;
    moetrace::tracegen::Generate(config, {}, sink, {}, int(state.range(0)));
    events += sink.events;
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_GenerateMidMoe)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateMidMoe)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// The RL emitter on the tests' hand-built plan (4 cards, 2 iterations, a
// tiny-moe actor update on cards 0-2): events per CPU second of
// CardEmitter, whose cost is mostly the engine's pass 2 for the card's train
// rank (once per card) and its copy per iteration.
void BM_EmitRlHandPlan(benchmark::State& state) {
  const moetrace::tracegen::rl::Plan plan = moetrace::tracegen::rl::testing::HandPlan();
  const auto groups = moetrace::tracegen::rl::BuildPhaseGroups(plan);
  moetrace::tracegen::rl::CardEmitter emitter(plan, groups);
  moetrace::Rank r;
  int64_t events = 0;
  for (auto _ : state) {
    for (int c = 0; c < plan.cards; ++c) {
      emitter.Emit(c, &r);
      events += int64_t(r.EventCount());
    }
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_EmitRlHandPlan)->Unit(benchmark::kMillisecond);

// The same train ranks from the engine alone, once each (the baseline the
// RL card adds its copies, phases and counters to).
void BM_EmitTrainRanksOfHandPlan(benchmark::State& state) {
  const moetrace::tracegen::rl::Plan plan = moetrace::tracegen::rl::testing::HandPlan();
  moetrace::tracegen::RankEmitter emitter(*plan.train_engine);
  moetrace::Rank r;
  int64_t events = 0;
  for (auto _ : state) {
    for (int c = 0; c < 3; ++c) {
      emitter.Emit(c, &r);
      events += int64_t(r.EventCount());
    }
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_EmitTrainRanksOfHandPlan)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
