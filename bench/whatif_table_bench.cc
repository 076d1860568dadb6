// What-if accuracy on tiny-moe: for each knob, replay(trace of config A,
// changed to B) against generate(B), step time and peak memory, printed as
// a Markdown table. RunConfig knobs replay through tracegen (regeneration);
// the rows marked "graph" use the dependency-graph replay alone, against
// the tracegen change it stands for. Then a Google Benchmark of the graph
// replay's throughput (nodes/s).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/replay/replay.h"
#include "tracegen/config.h"
#include "tracegen/generate.h"

namespace moetrace {
namespace {

Trace TinyMoe(const std::vector<std::string>& sets) {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", sets, 0});
  MemorySink sink;
  tracegen::Generate(c, {}, sink);
  return std::move(sink.trace());
}

std::string Mul(const std::string& key, double base, double f) {
  return key + "=" + std::to_string(base * f);
}

struct Row {
  std::string knob;
  std::vector<std::string> a, change, b;
};

void PrintTable() {
  tracegen::RunConfig c = tracegen::BuildConfig({"tiny-moe", "", {}, 0});
  const auto& hw = c.hardware();
  const std::vector<std::string> noq = {"host.task_queue=false"};
  std::vector<Row> rows = {
      {"task queue off -> on", noq, {"host.task_queue=true"}, {"host.task_queue=true"}},
      {"NUMA affinity off -> on", {"host.numa_affinity=false"}, {"host.numa_affinity=true"}, {}},
      {"micro-batch 1 -> 2", {}, {"parallel.micro_batch_size=2"}, {"parallel.micro_batch_size=2"}},
      {"all-to-all flat -> hierarchical", {}, {"comm.a2a=hierarchical"}, {"comm.a2a=hierarchical"}},
      {"schedule 1f1b -> adaptive (vpp 2)", {}, {"schedule.kind=adaptive", "parallel.vpp=2"},
       {"schedule.kind=adaptive", "parallel.vpp=2"}},
      {"EDPB off -> on", {}, {"routing.edpb=true"}, {"routing.edpb=true"}},
      {"recompute none -> selective", {}, {"memory.recompute=selective"}, {"memory.recompute=selective"}},
      {"recompute none -> full", {}, {"memory.recompute=full"}, {"memory.recompute=full"}},
      {"graph: speed.flash_attention=2", {}, {"speed.flash_attention=2"},
       {Mul("hardware.eff_flash_fwd_opt", hw.eff_flash_fwd_opt(), 2),
        Mul("hardware.eff_flash_bwd_opt", hw.eff_flash_bwd_opt(), 2)}},
      // tracegen's grouped GEMM efficiency scales with eff_matmul_opt too.
      {"graph: speed.matmul=1.5 + grouped_matmul=1.5", {}, {"speed.matmul=1.5", "speed.grouped_matmul=1.5"},
       {Mul("hardware.eff_matmul_opt", hw.eff_matmul_opt(), 1.5)}},
      {"graph: host.dispatch_factor=2 (task queue off)", noq, {"host.dispatch_factor=2"},
       {"host.task_queue=false", Mul("hardware.framework_op_ns", hw.framework_op_ns(), 2),
        Mul("hardware.launch_ns", hw.launch_ns(), 2), Mul("hardware.enqueue_ns", hw.enqueue_ns(), 2)}},
      {"graph: sync.remove=token counts", {"host.sync_before_a2a=true"},
       {"sync.remove=token counts"}, {"host.sync_before_a2a=false"}},
  };
  std::printf("| knob | how | step A (ms) | predicted B (ms) | actual B (ms) | error | peak B predicted (GiB) | peak B actual (GiB) |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    Trace ta = TinyMoe(r.a);
    replay::ReplayResult res = replay::Replay(ta, r.change);
    Trace tb = TinyMoe(r.b);
    MemorySource sb(tb);
    analysis::Analysis ab = Analyze(sb);
    const int64_t actual = replay::MedianStepNs(ab);
    const int64_t peak = replay::PeakMemoryBytes(ab);
    std::printf("| %s | %s | %.3f | %.3f | %.3f | %+.2f%% | %.3f | %.3f |\n", r.knob.c_str(),
                res.regenerated ? "tracegen" : "graph", res.step_before_ns / 1e6,
                res.step_after_ns / 1e6, actual / 1e6,
                100.0 * double(res.step_after_ns - actual) / double(actual),
                res.peak_after_bytes / 1073741824.0, peak / 1073741824.0);
  }
  std::fflush(stdout);
}

void BM_GraphReplayTinyMoe(benchmark::State& state) {
  Trace t = TinyMoe({});
  replay::GraphModifications mods;
  mods.speed[int(replay::OpClass::kMatmul)] = 1.5;
  int64_t nodes = 0;
  for (auto _ : state) {
    replay::GraphStats stats;
    Trace out = replay::ReplayGraph(t, mods, &stats);
    benchmark::DoNotOptimize(out.ranks.size());
    nodes = stats.nodes;
  }
  state.SetItemsProcessed(state.iterations() * nodes);
}
BENCHMARK(BM_GraphReplayTinyMoe)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetrace

int main(int argc, char** argv) {
  moetrace::PrintTable();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
