// Full per-rank analysis throughput (events/s per core) on a large
// in-memory MoE-like rank: compute / comm / copy streams, a launch per op on
// two host threads (enqueue + dispatch), syncs, step markers, counters.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/rank_metrics.h"
#include "formats/open_trace.h"
#include "formats/trace_io.h"

namespace moetrace {
namespace {

Rank MakeBigRank(int32_t id, int64_t ops_per_stream, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Rank r;
  r.rank = id;
  for (const char* n : {"compute", "comm", "copy", "compute2"}) {
    r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, n);
  }
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python");
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostDispatch, "dequeue");
  Track& mem = r.AddTrack(TrackKind::kCounter, TrackRole::kUnspecified, "allocated");
  mem.counter = CounterKind::kMemAllocated;
  const StringId names[4] = {r.strings.Intern("GroupedMatmul"), r.strings.Intern("alltoallv"),
                             r.strings.Intern("MemcpyD2H"), r.strings.Intern("FlashAttention")};
  const StringId launch = r.strings.Intern("aclnnLaunch");
  const StringId group = r.strings.Intern("ep_group_0");
  const Category cats[4] = {Category::kCompute, Category::kCollective, Category::kCopy,
                            Category::kCompute};
  const int64_t steps = 8;
  const int64_t per_step = ops_per_stream / steps;
  int64_t corr = 0;
  TimeNs host_t = 0;
  TimeNs dev_t[4] = {1000, 1000, 1000, 1000};
  for (int64_t s = 0; s < steps; ++s) {
    Event m;
    m.ts = host_t;
    m.category = Category::kMarker;
    m.flags = kFlagStepMarker;
    m.step = static_cast<int32_t>(s);
    m.dur = 0;
    const size_t marker_pos = r.tracks[4].events.size();
    r.tracks[4].events.Append(m);
    for (int64_t k = 0; k < per_step * 4; ++k) {
      const int st = static_cast<int>(k % 4);
      Event l;
      l.ts = host_t;
      l.dur = 2000 + static_cast<TimeNs>(rng() % 3000);
      l.category = Category::kLaunch;
      l.name = launch;
      l.correlation = ++corr;
      r.tracks[4].events.Append(l);
      Event d = l;
      d.ts = l.ts + l.dur;
      d.dur = 500;
      r.tracks[5].events.Append(d);
      host_t += l.dur + 100;
      if (k % 97 == 0) {
        Event sync;
        sync.ts = host_t;
        sync.dur = 30000;
        sync.category = Category::kSync;
        sync.flags = kFlagBlocking;
        r.tracks[4].events.Append(sync);
        host_t += sync.dur;
      }
      Event op;
      op.ts = std::max(dev_t[st], d.ts + d.dur + 200);
      op.dur = 5000 + static_cast<TimeNs>(rng() % 20000);
      op.category = cats[st];
      op.name = names[st];
      op.correlation = corr;
      op.layer = static_cast<int32_t>((k / 16) % 61);
      if (cats[st] == Category::kCollective) {
        CommRecord c;
        c.kind = CollectiveKind::kAllToAllV;
        c.comm_class = CommClass::kEP;
        c.group = group;
        c.group_size = 16;
        c.sequence = corr;
        op.comm = static_cast<int32_t>(r.tracks[st].comms.size());
        r.tracks[st].comms.push_back(std::move(c));
      }
      r.tracks[st].events.Append(op);
      dev_t[st] = op.ts + op.dur + static_cast<TimeNs>(rng() % 4000);
      if (k % 64 == 0) {
        mem.sample_ts.push_back(op.ts);
        mem.sample_value.push_back(1e9 + static_cast<double>(rng() % 1000000));
      }
    }
    r.tracks[4].events.dur[marker_pos] = host_t - r.tracks[4].events.ts[marker_pos];
  }
  return r;
}

void BM_AnalyzeRank(benchmark::State& state) {
  const Rank rank = MakeBigRank(0, state.range(0), 1);
  const int64_t events = static_cast<int64_t>(rank.EventCount());
  RankScratch scratch;
  for (auto _ : state) {
    RankMetrics m = AnalyzeRank(rank, &scratch);
    benchmark::DoNotOptimize(m.total.span);
    Recycle(std::move(m), &scratch);
  }
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_AnalyzeRank)->Arg(1 << 18)->Unit(benchmark::kMillisecond);

// A streaming source of many ranks: ReadRank copies one of a few template
// ranks (as a reader decoding a rank would produce a fresh one), so the
// whole trace is never in memory.
class TemplateSource : public TraceSource {
 public:
  TemplateSource(size_t ranks, int64_t ops_per_stream) : ranks_(ranks) {
    for (int t = 0; t < 8; ++t) templates_.push_back(MakeBigRank(t, ops_per_stream, t + 1));
    for (const Rank& r : templates_) events_per_8_ += static_cast<int64_t>(r.EventCount());
  }
  const Metadata& metadata() const override { return md_; }
  size_t rank_count() const override { return ranks_; }
  Rank ReadRank(size_t i) const override {
    Rank r = templates_[i % templates_.size()];
    r.rank = static_cast<int32_t>(i);
    return r;
  }
  int64_t events() const { return events_per_8_ * static_cast<int64_t>(ranks_) / 8; }

 private:
  size_t ranks_;
  std::vector<Rank> templates_;
  int64_t events_per_8_ = 0;
  Metadata md_;
};

// Whole pipeline (read + analyze + cross-rank) over 1,024 ranks, with 1 or
// 2 worker threads (each holds one rank at a time).
void BM_AnalyzeTrace(benchmark::State& state) {
  TemplateSource src(static_cast<size_t>(state.range(0)), 1 << 12);
  AnalyzeOptions opt;
  opt.threads = static_cast<int>(state.range(1));
  for (auto _ : state) {
    analysis::Analysis a = Analyze(src, opt);
    benchmark::DoNotOptimize(a.cluster().breakdown().span_ns());
  }
  state.SetItemsProcessed(state.iterations() * src.events());
  state.counters["events"] = static_cast<double>(src.events());
}
BENCHMARK(BM_AnalyzeTrace)->Args({1024, 1})->Args({1024, 2})->Unit(benchmark::kMillisecond)->UseRealTime();

// 10,000 small ranks: memory stays bounded (one rank per worker plus the
// per-rank summaries), see the peak RSS of the process.
void BM_AnalyzeTenThousandRanks(benchmark::State& state) {
  TemplateSource src(10000, 1 << 9);
  AnalyzeOptions opt;
  opt.threads = 2;
  for (auto _ : state) {
    analysis::Analysis a = Analyze(src, opt);
    benchmark::DoNotOptimize(a.cluster().breakdown().span_ns());
  }
  state.SetItemsProcessed(state.iterations() * src.events());
  state.counters["events"] = static_cast<double>(src.events());
}
BENCHMARK(BM_AnalyzeTenThousandRanks)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// AnalyzeRank alone on real ranks: 32 ranks spread over the trace named by
// MOETRACE_BENCH_TRACE (e.g. the 718B trace, /work/big/pangu8.mtrace), read
// once, then analysed per iteration. Registered only when the variable is
// set: the synthetic rank above has four streams of equal length, a real
// one five to six of very unequal lengths, which takes other paths.
void BM_AnalyzeRealRanks(benchmark::State& state, const std::string& path) {
  std::unique_ptr<TraceSource> src = OpenTrace(path);
  std::vector<Rank> ranks;
  const size_t n = src->rank_count(), want = std::min<size_t>(n, 32);
  for (size_t k = 0; k < want; ++k) ranks.push_back(src->ReadRank(k * n / want + k % 7));
  int64_t events = 0;
  for (const Rank& r : ranks) events += static_cast<int64_t>(r.EventCount());
  RankScratch scratch;
  for (auto _ : state) {
    for (const Rank& r : ranks) {
      RankMetrics m = AnalyzeRank(r, &scratch);
      benchmark::DoNotOptimize(m.total.span);
      Recycle(std::move(m), &scratch);
    }
  }
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["events"] = static_cast<double>(events);
}
const bool kRealRanksRegistered = [] {
  if (const char* path = std::getenv("MOETRACE_BENCH_TRACE"); path != nullptr && *path != 0) {
    benchmark::RegisterBenchmark("BM_AnalyzeRealRanks", BM_AnalyzeRealRanks, std::string(path))
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace moetrace

BENCHMARK_MAIN();
