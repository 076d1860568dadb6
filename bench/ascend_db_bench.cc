// Ascend SQLite DB reader throughput: a generated ascend_pytorch_profiler DB
// of 1 M device tasks (4 streams; every task a kernel with its
// COMPUTE_TASK_INFO row, 1 in 8 launched through CANN_API) read into a Rank.
// items/s = TASK rows per second on one core (target >= 5 M/s).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "formats/ascend_db/ascend_db_importer.h"
#include "formats/ascend_db/db_writer.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

std::string MakeDb(int64_t tasks) {
  std::string path = (fs::temp_directory_path() / ("moetrace_bench_" + std::to_string(tasks) +
                                                   "_msprof_0.db")).string();
  if (fs::exists(path)) return path;
  Rank r;
  r.rank = 0;
  r.pid = 4242;
  for (int s = 0; s < 4; ++s) {
    r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "Stream " + std::to_string(s), s);
  }
  Track& host = r.AddTrack(TrackKind::kHostThread, TrackRole::kHostOther, "Thread 1", 1);
  const char* names[8] = {"MatMulV2", "GroupedMatmul", "FlashAttentionScore", "Add",
                          "Cast", "RmsNorm", "Softmax", "Transpose"};
  TimeNs t = 1'700'000'000'000'000'000;
  for (int64_t i = 0; i < tasks; ++i) {
    Event e;
    e.ts = t;
    e.dur = 1'000 + (i * 37) % 5'000;
    e.name = r.strings.Intern(names[i % 8]);
    e.category = Category::kCompute;
    if (i % 8 == 0) {
      e.correlation = i;
      Event l;
      l.ts = t - 500;
      l.dur = 300;
      l.name = r.strings.Intern("aclnnMatmul");
      l.category = Category::kLaunch;
      l.correlation = i;
      host.events.Append(l);
    }
    r.tracks[static_cast<size_t>(i % 4)].events.Append(e);
    t += 1'500;
  }
  WriteAscendDb(r, 0, path + ".tmp");
  fs::rename(path + ".tmp", path);
  return path;
}

void BM_ReadAscendDb(benchmark::State& state) {
  const int64_t tasks = state.range(0);
  std::string path = MakeDb(tasks);
  auto src = OpenAscendDb(path);
  size_t events = 0;
  for (auto _ : state) {
    Rank r = src->ReadRank(0);
    events = r.EventCount();
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * tasks);
  state.counters["imported_events"] = static_cast<double>(events);
  state.counters["db_bytes/task"] = static_cast<double>(fs::file_size(path)) / static_cast<double>(tasks);
}
BENCHMARK(BM_ReadAscendDb)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace moetrace

BENCHMARK_MAIN();
