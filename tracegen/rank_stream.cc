#include "tracegen/rank_stream.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "tracegen/labels.h"
#include "tracegen/ordered_run.h"

namespace moetrace::tracegen {

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
double ProcessCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

namespace {

using Clock = std::chrono::steady_clock;

// What a worker makes of one rank; the writer consumes it in rank order.
struct RankResult {
  int64_t events = 0;
  std::vector<LabeledValue> labels;
  std::string oom;                        // empty: the peak fits in HBM
  std::unique_ptr<EncodedRank> encoded;   // when the sink has an encoder,
  Rank rank;                              // else the rank itself
  double emit = 0, labels_s = 0, encode = 0;
};

// One worker thread: its emitter, the Rank it refills, its encoder.
struct Worker {
  Worker(RankEmitFn e, TraceSink& sink) : emit(std::move(e)), encoder(sink.CreateEncoder()) {}
  RankEmitFn emit;
  std::unique_ptr<RankEncoder> encoder;
  Rank rank;  // reused while the sink takes encoded ranks: keeps its columns' capacity
};

void EmitOne(Worker& w, int32_t r, size_t index, const StreamOptions& o, RankResult* out) {
  const double t0 = ThreadCpuSeconds();
  w.emit(r, &w.rank);
  const double t1 = ThreadCpuSeconds();
  if (o.rank_labels) out->labels = GroundTruthLabels(w.rank);
  MemoryPeak peak = FindMemoryPeak(w.rank);
  const double t2 = ThreadCpuSeconds();
  if (peak.peak > o.hbm_bytes)
    out->oom = fmt::format(
        "rank {}: out of memory: peak {:.2f} GiB > {:.2f} GiB HBM at t={} ns; largest holder: "
        "{} ({:.2f} GiB)",
        r, peak.peak / double(1 << 30), o.hbm_bytes / double(1 << 30), peak.at, peak.holder,
        peak.holder_bytes / double(1 << 30));
  out->events = int64_t(w.rank.EventCount());
  if (w.encoder) {
    out->encoded = w.encoder->Encode(w.rank, index);
  } else {
    out->rank = std::move(w.rank);  // the next rank starts from empty columns
    w.rank = Rank();
  }
  out->emit = t1 - t0;
  out->labels_s = t2 - t1;
  out->encode = ThreadCpuSeconds() - t2;
}

}  // namespace

void StreamRanks(const std::vector<int32_t>& ranks, const std::function<RankEmitFn()>& make_emitter,
                 const StreamOptions& options, TraceSink& sink, Metadata* meta,
                 GenerateSummary* summary, const std::function<void(int, int)>& progress) {
  const int threads = int(std::min<size_t>(size_t(std::max(options.threads, 1)), ranks.size()));
  std::vector<std::unique_ptr<Worker>> workers;
  for (int w = 0; w < std::max(threads, 1); ++w) workers.push_back(std::make_unique<Worker>(make_emitter(), sink));
  // Ranks in flight (being emitted or waiting for the writer) are bounded by
  // the window, so that a slow rank or a write stalled by the disk does not
  // stop the other threads: when the sink encodes, as many per thread as it
  // says (16 native ranks of the 718B preset, ~4 MB; 4 Perfetto ones, ~13 MB), else
  // 4 per thread (whole Ranks, ~3 MB each for 718B).
  const bool encodes = workers[0]->encoder != nullptr;
  const size_t window = (encodes ? sink.EncodedRanksPerThread() : 4) * size_t(std::max(threads, 1));
  std::vector<RankResult> slots(window);
  int done = 0;
  RunOrdered(
      ranks.size(), threads, window,
      [&](int w, size_t i) { EmitOne(*workers[w], ranks[i], i, options, &slots[i % window]); },
      [&](size_t i) {
        RankResult& res = slots[i % window];
        meta->ground_truth.insert(meta->ground_truth.end(), std::make_move_iterator(res.labels.begin()),
                                  std::make_move_iterator(res.labels.end()));
        if (!res.oom.empty()) {
          meta->attributes.emplace_back(fmt::format("oom.rank{}", ranks[i]), res.oom);
          if (summary->warnings.size() < 8) summary->warnings.push_back(res.oom);
        }
        summary->events += res.events;
        summary->times.emit += res.emit;
        summary->times.labels += res.labels_s;
        summary->times.encode += res.encode;
        const double t0 = ThreadCpuSeconds();
        const auto w0 = Clock::now();
        if (res.encoded) sink.AddEncoded(std::move(res.encoded));
        else sink.AddRank(res.rank);
        summary->times.write += ThreadCpuSeconds() - t0;
        summary->times.write_wall += std::chrono::duration<double>(Clock::now() - w0).count();
        res = RankResult();  // frees the slot's memory before its next rank
        ++summary->ranks;
        if (progress) progress(++done, int(ranks.size()));
      });
  const double t0 = ThreadCpuSeconds();
  sink.Finish(*meta);
  summary->times.write += ThreadCpuSeconds() - t0;
}

}  // namespace moetrace::tracegen
