// Throughput of the streaming exporters: events (slices, instants and
// counter samples) written per second, and output bytes per event.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "formats/chrome/chrome_json_writer.h"
#include "formats/perfetto/perfetto_writer.h"
#include "formats/sample_trace.h"

namespace moetrace {
namespace {

const Trace& BenchTrace() {
  static const Trace* trace = new Trace(MakeSampleTrace(4, 8192, 1));
  return *trace;
}

size_t CountEvents(const Trace& t) {
  size_t n = 0;
  for (const Rank& r : t.ranks) {
    for (const Track& track : r.tracks) n += track.events.size() + track.sample_ts.size();
  }
  return n;
}

template <typename MakeSink>
void RunExport(benchmark::State& state, const char* ext, MakeSink make) {
  const Trace& t = BenchTrace();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("moetrace_export_bench_" + std::to_string(getpid()) + ext))
                               .string();
  for (auto _ : state) {
    auto sink = make(path);
    for (const Rank& r : t.ranks) sink->AddRank(r);
    sink->Finish(t.metadata);
  }
  const size_t events = CountEvents(t);
  const double bytes = static_cast<double>(std::filesystem::file_size(path));
  std::filesystem::remove(path);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.counters["bytes_per_event"] = bytes / static_cast<double>(events);
  state.counters["events"] = static_cast<double>(events);
}

void BM_ExportPerfetto(benchmark::State& state) {
  RunExport(state, ".pftrace", [](const std::string& p) { return CreatePerfettoSink(p); });
}
BENCHMARK(BM_ExportPerfetto)->Unit(benchmark::kMillisecond);

void BM_ExportChromeJson(benchmark::State& state) {
  RunExport(state, ".json", [](const std::string& p) { return CreateChromeJsonSink(p); });
}
BENCHMARK(BM_ExportChromeJson)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetrace

BENCHMARK_MAIN();
