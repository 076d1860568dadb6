#include "tracegen/generate.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <memory>
#include <thread>

#include <fmt/core.h>

#include "formats/errors.h"
#include "tracegen/engine.h"
#include "tracegen/labels.h"
#include "tracegen/ordered_run.h"

namespace moetrace::tracegen {

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
// CPU seconds of the calling thread / of the process: phases measured in
// CPU time are not inflated when other processes share the cores.
double ThreadCpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
double ProcessCpu() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// What a worker makes of one rank; the writer consumes it in rank order.
struct RankResult {
  int64_t events = 0;
  std::vector<LabeledValue> labels;
  std::string oom;                        // empty: the peak fits in HBM
  std::unique_ptr<EncodedRank> encoded;   // when the sink has an encoder,
  Rank rank;                              // else the rank itself
  double emit = 0, labels_s = 0, encode = 0;
};

// One pass-2 thread: its emitter, the Rank it refills, its encoder.
struct Worker {
  Worker(const Engine& engine, TraceSink& sink) : emitter(engine), encoder(sink.CreateEncoder()) {}
  RankEmitter emitter;
  std::unique_ptr<RankEncoder> encoder;
  Rank rank;  // reused while the sink takes encoded ranks: keeps its columns' capacity
};

void EmitOne(Worker& w, int32_t r, double capacity, RankResult* out) {
  const double t0 = ThreadCpu();
  w.emitter.Emit(r, &w.rank);
  const double t1 = ThreadCpu();
  out->labels = GroundTruthLabels(w.rank);
  MemoryPeak peak = FindMemoryPeak(w.rank);
  const double t2 = ThreadCpu();
  if (peak.peak > capacity)
    out->oom = fmt::format(
        "rank {}: out of memory: peak {:.2f} GiB > {:.2f} GiB HBM at t={} ns; largest holder: "
        "{} ({:.2f} GiB)",
        r, peak.peak / double(1 << 30), capacity / double(1 << 30), peak.at, peak.holder,
        peak.holder_bytes / double(1 << 30));
  out->events = int64_t(w.rank.EventCount());
  if (w.encoder) {
    out->encoded = w.encoder->Encode(w.rank);
  } else {
    out->rank = std::move(w.rank);  // the next rank starts from empty columns
    w.rank = Rank();
  }
  out->emit = t1 - t0;
  out->labels_s = t2 - t1;
  out->encode = ThreadCpu() - t2;
}

}  // namespace

GenerateSummary Generate(const RunConfig& config, const std::vector<int32_t>& ranks,
                         TraceSink& sink, const std::function<void(int, int)>& progress,
                         int threads, std::string_view pass1) {
  const auto start = Clock::now();
  const double cpu0 = ProcessCpu();
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  Engine engine(config);
  if (pass1.empty()) {
    engine.Simulate(threads);
  } else {
    engine.LoadPass1(pass1);
  }
  GenerateSummary summary;
  summary.times.simulate = Seconds(start, Clock::now());
  summary.times.simulate_cpu = ProcessCpu() - cpu0;
  std::vector<int32_t> selected = ranks;
  if (selected.empty())
    for (int r = 0; r < engine.world_size(); ++r) selected.push_back(r);
  threads = int(std::min<size_t>(size_t(threads), selected.size()));
  Metadata meta = engine.BaseMetadata();
  const double capacity = config.hardware().hbm_bytes();
  std::vector<std::unique_ptr<Worker>> workers;
  for (int w = 0; w < std::max(threads, 1); ++w) workers.push_back(std::make_unique<Worker>(engine, sink));
  // Ranks in flight (being emitted or waiting for the writer) are bounded by
  // the window, so that a slow rank or a write stalled by the disk does not
  // stop the other threads: 16 per thread when the sink encodes (~0.25 MB of
  // records each for the 718B preset, so ~4 MB per thread), else 4 per
  // thread (whole Ranks, ~3 MB each for 718B).
  const bool encodes = workers[0]->encoder != nullptr;
  const size_t window = (encodes ? 16 : 4) * size_t(threads);
  std::vector<RankResult> slots(window);
  int done = 0;
  RunOrdered(
      selected.size(), threads, window,
      [&](int w, size_t i) { EmitOne(*workers[w], selected[i], capacity, &slots[i % window]); },
      [&](size_t i) {
        RankResult& res = slots[i % window];
        meta.ground_truth.insert(meta.ground_truth.end(), std::make_move_iterator(res.labels.begin()),
                                 std::make_move_iterator(res.labels.end()));
        if (!res.oom.empty()) {
          meta.attributes.emplace_back(fmt::format("oom.rank{}", selected[i]), res.oom);
          if (summary.warnings.size() < 8) summary.warnings.push_back(res.oom);
        }
        summary.events += res.events;
        summary.times.emit += res.emit;
        summary.times.labels += res.labels_s;
        summary.times.encode += res.encode;
        const double t0 = ThreadCpu();
        const auto w0 = Clock::now();
        if (res.encoded) sink.AddEncoded(std::move(res.encoded));
        else sink.AddRank(res.rank);
        summary.times.write += ThreadCpu() - t0;
        summary.times.write_wall += Seconds(w0, Clock::now());
        res = RankResult();  // frees the slot's memory before its next rank
        ++summary.ranks;
        if (progress) progress(++done, int(selected.size()));
      });
  const double t0 = ThreadCpu();
  sink.Finish(meta);
  summary.times.write += ThreadCpu() - t0;
  summary.times.total = Seconds(start, Clock::now());
  summary.times.total_cpu = ProcessCpu() - cpu0;
  return summary;
}

std::string SimulatePass1(const RunConfig& config, int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  Engine engine(config);
  engine.Simulate(threads);
  return engine.SavePass1();
}

std::vector<int32_t> ParseRankSpec(std::string_view spec, int world) {
  std::vector<int32_t> out;
  auto num = [&](std::string_view s) {
    int v = -1;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      ThrowInputError("--ranks", spec, fmt::format("'{}' is not a rank number", s));
    if (v < 0 || v >= world)
      ThrowInputError("--ranks", spec, fmt::format("rank {} outside 0-{}", v, world - 1));
    return v;
  };
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view part = spec.substr(0, comma);
    size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      out.push_back(num(part));
    } else {
      int a = num(part.substr(0, dash)), b = num(part.substr(dash + 1));
      if (b < a) ThrowInputError("--ranks", part, "range end before its start");
      for (int r = a; r <= b; ++r) out.push_back(r);
    }
    if (comma == std::string_view::npos) break;
    spec = spec.substr(comma + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace moetrace::tracegen
