// Kineto JSON parse-and-import throughput.
//
//   build/bench/kineto_bench                       # allreduce-v100 + a 64 MB synthetic trace
//   MOETRACE_KINETO_BENCH_MB=1024 build/bench/kineto_bench   # a 1 GB synthetic trace
//
// Rates are per CPU second of the importing thread (one core). The machine is
// shared, so wall-clock numbers are noisy; CPU time is what is reported.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/padded_input.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

double PeakRssMb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;
}

// Bytes of the model (columns of the event tables and counter samples).
double ModelBytes(const Rank& r) {
  double b = 0;
  for (const Track& t : r.tracks) {
    b += double(t.events.size()) * (8 + 8 + 4 + 1 + 1 + 2 + 8 + 4 + 4 + 4 + 4 + 8 + 8);
    b += double(t.sample_ts.size()) * 16;
  }
  return b;
}

void Run(benchmark::State& state, const std::string& path) {
  if (path.empty() || !fs::exists(path)) {
    state.SkipWithError(("missing " + path).c_str());
    return;
  }
  size_t events = 0;
  size_t bytes = 0;
  double model = 0;
  for (auto _ : state) {
    TraceInput in(path);  // what OpenKineto does: map or inflate, parse, import
    Rank r = ReadKinetoRank(in.buffer(), path, 0, "default", nullptr,
                            [&in] { return in.Refill(); });
    events = r.EventCount();
    bytes = in.buffer().size();
    model = ModelBytes(r);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(int64_t(bytes) * state.iterations());
  state.SetItemsProcessed(int64_t(events) * state.iterations());
  state.counters["json_MB"] = double(bytes) / 1e6;
  state.counters["events"] = double(events);
  state.counters["json_bytes/event"] = double(bytes) / double(events ? events : 1);
  state.counters["model_bytes/event"] = model / double(events ? events : 1);
  // Process-wide high-water mark (includes earlier benchmarks of this run).
  state.counters["peak_rss_MB"] = PeakRssMb();
}

// allreduce-v100, decompressed once to /tmp so the benchmark reads plain JSON.
std::string AllreduceJson() {
  std::string gz = RealTracesRoot() + "/kineto/allreduce-v100/hta__df_index_resolver__df_index_resolver.json.gz";
  std::string out = (fs::temp_directory_path() / "moetrace_bench_allreduce_v100.json").string();
  if (!fs::exists(gz)) return "";
  if (!fs::exists(out)) {
    PaddedBuffer b = ReadTraceFile(gz);
    FILE* f = fopen(out.c_str(), "wb");
    if (!f) return "";
    fwrite(b.data(), 1, b.size(), f);
    fclose(f);
  }
  return out;
}

// A realistic training trace: per step a ProfilerStep annotation; per layer
// cpu ops that launch kernels (cudaLaunchKernel + kernel + ac2g flows), an
// NCCL all-to-all issued from record_param_comms, copies and memory events.
std::string SyntheticJson(size_t target_mb) {
  std::string out = (fs::temp_directory_path() /
                     ("moetrace_bench_kineto_" + std::to_string(target_mb) + "MB.json"))
                        .string();
  if (fs::exists(out)) return out;
  std::string tmp = out + ".tmp";
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) return "";
  std::mt19937_64 rng(42);
  const size_t target = target_mb << 20;
  size_t written = 0;
  auto put = [&](const char* fmt, auto... args) {
    int n = fprintf(f, fmt, args...);
    written += size_t(n > 0 ? n : 0);
  };
  put("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\", "
      "\"totalGlobalMem\": 85000000000}],\n  \"distributedInfo\": {\"backend\": \"nccl\", "
      "\"rank\": 0, \"world_size\": 64},\n  \"traceEvents\": [\n");
  int64_t ts = 1700000000000000;  // µs
  int64_t gpu = ts;
  int64_t corr = 1, ext = 1, step = 0;
  int64_t allocated = 1ll << 30;
  bool first = true;
  auto sep = [&]() {
    if (!first) put(",\n");
    first = false;
  };
  while (written < target) {
    int64_t step_start = ts;
    sep();
    put("  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%ld\", "
        "\"pid\": 1000, \"tid\": 1000, \"ts\": %ld.%03d, \"dur\": %d.000, \"args\": {\"External id\": %ld}}",
        step, step_start, 0, 400000, ext++);
    for (int layer = 0; layer < 200 && written < target; ++layer) {
      for (int k = 0; k < 20; ++k) {
        int64_t op_ts = ts;
        int dur = 20 + int(rng() % 30);
        sep();
        put("  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1000, "
            "\"tid\": 1000, \"ts\": %ld.%03d, \"dur\": %d.%03d, \"args\": {\"External id\": %ld, "
            "\"Record function id\": 0, \"Ev Idx\": %ld, \"Input Dims\": [[4096, 7168], [7168, 2048]], "
            "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}}",
            op_ts, int(rng() % 1000), dur, int(rng() % 1000), ext, ext);
        int64_t l_ts = op_ts + 5;
        sep();
        put("  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
            "\"pid\": 1000, \"tid\": 1000, \"ts\": %ld.%03d, \"dur\": 7.%03d, \"args\": {\"External id\": %ld, "
            "\"cbid\": 211, \"correlation\": %ld}}",
            l_ts, 100, int(rng() % 1000), ext, corr);
        gpu = std::max(gpu, l_ts + 10);
        int kd = 30 + int(rng() % 60);
        sep();
        put("  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas\", "
            "\"pid\": 0, \"tid\": 7, \"ts\": %ld.%03d, \"dur\": %d.%03d, \"args\": {\"External id\": %ld, "
            "\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": %ld, "
            "\"registers per thread\": 168, \"shared memory\": 213248, \"blocks per SM\": 1, "
            "\"warps per SM\": 12, \"grid\": [132, 1, 1], \"block\": [384, 1, 1], "
            "\"est. achieved occupancy %%\": 19}}",
            gpu, 500, kd, int(rng() % 1000), ext, corr);
        sep();
        put("  {\"ph\": \"s\", \"id\": %ld, \"pid\": 1000, \"tid\": 1000, \"ts\": %ld.100, "
            "\"cat\": \"ac2g\", \"name\": \"ac2g\"}",
            corr, l_ts);
        sep();
        put("  {\"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": 7, \"ts\": %ld.500, "
            "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
            corr, gpu);
        gpu += kd + 1;
        ++corr;
        ++ext;
        ts += dur + 2;
        if (k % 4 == 0) {
          int64_t delta = int64_t(rng() % (64 << 20)) - (32 << 20);
          allocated = std::max<int64_t>(allocated + delta, 1 << 20);
          sep();
          put("  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
              "\"pid\": 1000, \"tid\": 1000, \"ts\": %ld.000, \"args\": {\"Ev Idx\": %ld, "
              "\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 139926520725504, \"Bytes\": %ld, "
              "\"Total Allocated\": %ld, \"Total Reserved\": %ld}}",
              ts, ext, delta, allocated, allocated + (1ll << 30));
        }
      }
      // Expert-parallel all-to-all.
      sep();
      put("  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1000, "
          "\"tid\": 1000, \"ts\": %ld.000, \"dur\": 40.000, \"args\": {\"External id\": %ld, "
          "\"Collective name\": \"all_to_allv\", \"dtype\": \"BFloat16\", \"In msg nelems\": 4194304, "
          "\"Out msg nelems\": 4194304, \"Group size\": 8, \"In split size\": \"[524288, 524288, 524288, 524288, 524288, 524288, 524288, 524288]\", "
          "\"Out split size\": \"[524288, 524288, 524288, 524288, 524288, 524288, 524288, 524288]\", "
          "\"Process Group Name\": \"3\", \"Process Group Description\": \"ep\", "
          "\"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, 7]\"}}",
          ts, ext);
      sep();
      put("  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1000, "
          "\"tid\": 1000, \"ts\": %ld.000, \"dur\": 10.000, \"args\": {\"External id\": %ld, \"cbid\": 211, "
          "\"correlation\": %ld}}",
          ts + 20, ext, corr);
      sep();
      put("  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)\", "
          "\"pid\": 0, \"tid\": 20, \"ts\": %ld.000, \"dur\": 300.000, \"args\": {\"External id\": %ld, "
          "\"device\": 0, \"stream\": 20, \"correlation\": %ld}}",
          gpu, ext, corr);
      ++corr;
      ++ext;
      ts += 50;
    }
    ++step;
    ts = std::max(ts, step_start + 400001);
  }
  put("\n  ],\n  \"traceName\": \"synthetic\"\n}\n");
  fclose(f);
  fs::rename(tmp, out);
  return out;
}

void BM_KinetoAllreduceV100(benchmark::State& state) { Run(state, AllreduceJson()); }

// The same trace read from its .json.gz (inflating included).
void BM_KinetoAllreduceV100Gzip(benchmark::State& state) {
  Run(state, RealTracesRoot() + "/kineto/allreduce-v100/hta__df_index_resolver__df_index_resolver.json.gz");
}

void BM_KinetoSynthetic(benchmark::State& state) {
  const char* env = std::getenv("MOETRACE_KINETO_BENCH_MB");
  size_t mb = env ? size_t(std::atol(env)) : 64;
  Run(state, SyntheticJson(mb));
}

BENCHMARK(BM_KinetoAllreduceV100)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_KinetoAllreduceV100Gzip)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_KinetoSynthetic)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace moetrace

BENCHMARK_MAIN();
